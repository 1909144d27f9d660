"""`vtrain report`: a job's or a study's folder as one self-contained HTML page.

`write_report(folder)` reads the folder (`vtrain.report.gather`: a path, /gcs/ or
gs://), draws the page (`vtrain.report.page`) and writes it: into the folder when
it is on this machine's disk, else to `report-<name>.html` here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

REPORT_FILE = "report.html"


def write_report(
    folder: str, output: str | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """Write `folder`'s report to `output` (default: see the module); its path."""
    from vtrain.report.gather import gather
    from vtrain.report.page import page
    from vtrain.storage import open_location
    from vtrain.storage.atomic import write_atomic

    data = gather(folder, environ)
    if output is None:
        local = open_location(folder, environ=environ).path
        output = os.path.join(local, REPORT_FILE) if local else f"report-{data.name}.html"
    write_atomic(output, page(data).encode())
    return output
