"""`python -m vtrain` is the `vtrain` command."""

import sys

from vtrain.cli import main

sys.exit(main())
