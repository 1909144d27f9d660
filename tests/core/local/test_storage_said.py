"""The `storage` check reads a failed open of a gs:// URI from a replica's output too: native
code and subprocesses, which neither the probe nor the kernel's events see."""

from __future__ import annotations

import pytest

from vtrain.local.checks.storage import storage
from vtrain.local.evidence import Evidence, Run

SAID = [
    (
        "sh: 1: cannot create gs://b/run/model/model.txt: Directory nonexistent",
        "gs://b/run/model/model.txt",
    ),
    ("bash: gs://b/m.txt: No such file or directory", "gs://b/m.txt"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'gs://b/m.npy'", "gs://b/m.npy"),
    ("RuntimeError: File gs://b/ck.pt cannot be opened.", None),  # says no missing file
    ("saving to gs://b/run/model/ with vtrain.storage", None),
    ("wrote /gcs/b/run/model/model.txt", None),
]


@pytest.mark.parametrize(("line", "uri"), SAID)
def test_a_failed_open_said_in_the_output_is_a_finding(line: str, uri: str | None) -> None:
    ev = Evidence({"chief-0": "127.0.0.2"}, {}, True, "/m", "/c", {}, None)
    run = Run("chief-0", 0, None, "/nonexistent/record", None)
    run.tail = ["starting", line]
    ev.runs.append(run)
    found = storage(ev)
    if uri is None:
        assert found == []
    else:
        assert [f.check for f in found] == ["storage"]
        assert uri in found[0].detail
