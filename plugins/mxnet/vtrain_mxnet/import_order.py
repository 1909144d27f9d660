"""Refuse to configure an MXNet that was imported, or started its kvstore, with other settings.

`import mxnet` with DMLC_ROLE=scheduler or server runs that role and exits,
and ps-lite reads the other DMLC variables once, when the first dist kvstore
is made. An MXNet imported with no DMLC variable set is still a plain worker
(checked: vtrain sets them later and the kvstore reads them); one imported
while a hand-written launcher's DMLC values were set, or a kvstore already
made by this plugin with other values, would join the wrong job or hang.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from vtrain import ConfigError

# The variables the dist kvstore this process made was given; one per process.
_started: dict[str, str | None] | None = None


def check_not_too_late(variables: Mapping[str, str | None], environ: Mapping[str, str]) -> None:
    """Raise when MXNet is already loaded with DMLC settings other than `variables`."""
    if _started is not None:
        for name, value in variables.items():
            if _started.get(name) != value:
                raise ConfigError(
                    "this process already joined an MXNet job with other settings",
                    source=name,
                    value=_started.get(name),
                    expected=repr(value),
                    hint="ps-lite starts once per process: configure() once, "
                    "with the same options, in each replica",
                )
        return
    if "mxnet" not in sys.modules:
        return
    for name, value in variables.items():
        before = environ.get(name)
        if before is not None and before != value:
            raise ConfigError(
                "MXNet was imported before configure(), with other settings",
                source=name,
                value=before,
                expected=f"{value!r}, as vtrain sets it for this replica",
                hint="move `import mxnet` (and imports that load it, such as gluoncv) below "
                f"`vtrain.plugins.get('mxnet').configure()`, and do not set {name} by hand",
            )


def mark_started(variables: Mapping[str, str | None]) -> None:
    """Remember the settings this process's dist kvstore was made with."""
    global _started
    _started = dict(variables)
