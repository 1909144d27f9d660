"""Builds vtrain's one C extension, the TFRecord block check, into the wheel.

`core/vtrain/data/_checked_records.c` checks a block of TFRecord records' data
checksums in one call (see its header). It is optional: where no C compiler is
at hand, or the build fails, the wheel is built without it, says so, and vtrain
checks the same checksums through google_crc32c, at about 0.8x the speed of
not checking them.

A regular wheel gets the module built in a temporary folder, and a tag for this
interpreter and platform; an editable install (`pip install -e .`) gets it next
to its source, where the source tree is imported from.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("core", "vtrain", "data", "_checked_records.c")
IN_WHEEL = SOURCE.parent.relative_to("core").as_posix()  # the module's folder in the wheel


def compile_command(source: Path, target: Path) -> list[str]:
    """The compiler's command line that builds `source` into the extension module `target`."""
    # LDSHARED is how this interpreter links its own extensions: "gcc -shared" on Linux,
    # "clang -bundle -undefined dynamic_lookup" on macOS. $CC, when set, names the compiler
    # in it, as setuptools does, and the flags stay.
    linker = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    if os.environ.get("CC"):
        linker[:1] = shlex.split(os.environ["CC"])
    return [
        *linker,
        *shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC"),
        "-O2",
        "-I",
        sysconfig.get_paths()["include"],
        str(source),
        "-o",
        str(target),
    ]


class CheckedRecordsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _folder: str | None = None  # a wheel's build folder, removed once the wheel holds its copy

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        source = Path(self.root, SOURCE)
        name = source.stem + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if version == "editable":
            target = source.with_name(name)
            if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
                return
            if not self._build(source, target):
                target.unlink(missing_ok=True)  # not one built from an older source
            return
        self._folder = tempfile.mkdtemp(prefix="vtrain-build-")
        built = Path(self._folder, name)
        if self._build(source, built):
            build_data["force_include"][str(built)] = f"{IN_WHEEL}/{name}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._folder is not None:  # the wheel holds its copy now
            shutil.rmtree(self._folder, ignore_errors=True)

    def _build(self, source: Path, target: Path) -> bool:
        # Built beside the target, then renamed onto it: `nox` installs two sessions at a time
        # into one source tree, and a test importing the module must never find half of it.
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        command = compile_command(source, partial)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            problem = str(e)
        else:
            if done.returncode == 0:
                os.replace(partial, target)
                return True
            said = (done.stderr or done.stdout).strip()[-2000:]
            problem = f"exit status {done.returncode}" + (f": {said}" if said else "")
        partial.unlink(missing_ok=True)
        self.app.display_warning(
            f"vtrain: built without {IN_WHEEL}/{SOURCE.stem} (TFRecord checksums through "
            f"google_crc32c instead): `{shlex.join(command)}` failed: {problem}"
        )
        return False
