"""`python -m vtrain_mxnet.service_process --parent PID`: a scheduler or server child's entry.

A module of its own, which nothing imports: `python -m` of a module that the
package's import has already loaded (vtrain_mxnet.service, through the plugin)
runs a second copy of it, and Python warns "found in sys.modules" in every child.
"""

from __future__ import annotations

import sys

from vtrain_mxnet.service import main

if __name__ == "__main__":
    sys.exit(main())
