"""Where vtrain's one C module (core/vtrain/data/_checked_records.c) is built, and where used.

Asked of the build hook itself (hatch_build.py): the compiler its command line names.
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _compiler() -> str | None:
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return shutil.which(hook.compile_command(Path("x.c"), Path("x.so"))[0])


COMPILER = _compiler()
"""The compiler the hook runs, where it is installed: every wheel built here holds the module."""
USED_HERE = (
    COMPILER is not None and sys.platform.startswith("linux") and (platform.machine() == "x86_64")
)
"""True where the reader must use the module: built, and the CPU's CRC32C instruction is x86's."""
