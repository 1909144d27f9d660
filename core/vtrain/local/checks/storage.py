"""The `storage` check: a `gs://` URI opened as a file, which no machine of the platform can."""

from __future__ import annotations

import re

from vtrain.local.evidence import Evidence, Run
from vtrain.local.verdict import Finding

GS_OPEN = "gs-open"
"""The probe's record of a refused open of a gs:// URI (`vtrain.local.probe`)."""
# What a failed open of a gs:// URI says in a replica's output when the probe cannot see it:
# native code and subprocesses (`sh: cannot create gs://b/m: Directory nonexistent`), whose
# failed open leaves nothing for the watcher either (the kernel reports no failed open).
_SAID = re.compile(
    r"(?:No such file or directory|cannot create|cannot open|Directory nonexistent|"
    r"can't create|Could not open)[^\n]*?['\"]?(gs:/[^\s'\":]+)|"
    r"(gs:/[^\s'\":]+)['\"]?:? *(?:No such file or directory|Directory nonexistent)"
)


def storage(ev: Evidence) -> list[Finding]:
    """A replica that opened a gs:// URI with `open()`: it fails on Vertex, or writes to the
    machine's own disk; one finding per replica, naming the first such URI."""
    findings = []
    reported: set[str] = set()
    for run in ev.runs:
        uris = [value for kind, value in run.probed() if kind == GS_OPEN] + _said(run)
        if not uris or run.name in reported:
            continue
        reported.add(run.name)
        uri = uris[0]
        more = f" (and {len(set(uris)) - 1} more)" if len(set(uris)) > 1 else ""
        findings.append(
            Finding(
                "storage",
                run.name,
                f"opened {uri}{more} with open(): a gs:// URI is no path, and on Vertex "
                "that open fails (FileNotFoundError), or writes to the machine's own disk "
                "where a folder 'gs:' was made",
                f"write to {fuse_path(uri)} (the same object, through Cloud Storage FUSE), "
                "through a client (google.cloud.storage, tf.io.gfile), or with vtrain: "
                "`handle.save_model(model)`, or "
                "`vtrain.storage.open_location(os.environ['AIP_MODEL_DIR'])"
                ".write_bytes('model.txt', data)`",
            )
        )
    return findings


def _said(run: Run) -> list[str]:
    """The gs:// URIs a run's output says it failed to open."""
    found = []
    for line in (*run.head, *run.tail):
        for match in _SAID.finditer(line):
            found.append(match.group(1) or match.group(2))
    return found


def fuse_path(uri: str) -> str:
    """`uri`'s path under Cloud Storage FUSE: ``gs://B/P`` -> ``/gcs/B/P``."""
    rest = uri[len("gs:") :].lstrip("/")
    return "/gcs/" + rest
