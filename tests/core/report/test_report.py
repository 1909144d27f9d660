"""`vtrain report` of a job's and a study's folder, on each storage medium (a disk, /gcs/, gs://
on a real Cloud Storage emulator): what the page holds, read back with an HTML parser.

A real browser opens the pages of real jobs in each framework's session
(tests/report_page.py); these build the folders record by record, to pin each rule.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from vtrain.report import write_report
from vtrain.storage import open_location
from vtrain.timeline.events import line

T0 = 1_800_000_000.0


class Elements(HTMLParser):
    """Every start tag's attributes, by tag."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}))

    def having(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.found if t == tag and cls in a.get("class", "").split()]


def _lines(records: list[dict[str, Any]]) -> bytes:
    return b"".join(line(r) for r in records)


def _job(medium: Any) -> dict[str, str]:
    environ = dict(medium.options["environ"])
    if "gcs_mount" in medium.options:  # where /gcs/ is, for this test (else the real /gcs)
        environ["VTRAIN_GCS_MOUNT"] = medium.options["gcs_mount"]
    folder = open_location(medium.uri, environ=environ)
    timeline = folder.join("timeline")
    timeline.makedirs()
    steps = [
        {"t": T0 + 2 + k, "e": "step" if k > 1 else "first_step", "step": k} for k in range(1, 9)
    ]
    first = [{"t": T0, "e": "start"}, {"t": T0 + 1, "e": "ready"}, *steps]
    first.append({"t": T0 + 7.5, "e": "commit", "step": 5, "held": 0.2})
    second = [{"t": T0 + 12, "e": "start"}, {"t": T0 + 13, "e": "resume", "step": 5}]
    second += [{"t": T0 + 10 + k, "e": "step", "step": k} for k in range(6, 12)]
    timeline.write_bytes("chief-0.1.jsonl", _lines(first))
    timeline.write_bytes("chief-0.2.jsonl", _lines(second))
    launcher = [
        {"t": T0, "e": "launch", "replica": "chief-0", "attempt": 1, "pid": 1},
        {"t": T0 + 10.5, "e": "kill", "replica": "chief-0", "signal": "KILL"},
        {"t": T0 + 11, "e": "launch", "replica": "chief-0", "attempt": 2, "pid": 2},
        {"t": T0 + 23, "e": "job_end", "outcome": "succeeded", "status": 0},
    ]
    timeline.write_bytes("launcher.jsonl", _lines(launcher))
    verdict = {"ready": False, "findings": [{"check": "kill", "replica": "chief-0", "detail": "d"}]}
    folder.write_bytes("verdict.json", json.dumps(verdict).encode())
    folder.join("replica-logs").makedirs()
    folder.join("replica-logs").write_bytes("chief-0.log", b"one\ntwo\nlast words\n")
    run = folder.join("tracking").join("job-1")
    run.makedirs()
    metric = [
        {"kind": "metric", "name": "loss", "value": 1.0 / k, "step": k, "attempt": 1, "t": T0}
        for k in range(1, 9)
    ]
    run.write_bytes("attempt-1.jsonl", b"".join(json.dumps(m).encode() + b"\n" for m in metric))
    return environ


def test_a_job_s_page_has_its_lanes_marks_goodput_metrics_verdict_and_last_lines(
    medium: Any, tmp_path: Path
) -> None:
    environ = _job(medium)
    written = write_report(medium.uri, str(tmp_path / "report.html"), environ)
    text = Path(written).read_text()
    page = Elements(text)
    lanes = [(a["data-replica"], a["data-attempt"]) for a in page.having("g", "lane")]
    assert lanes == [("chief-0", "1"), ("chief-0", "2")]
    assert [a["data-replica"] for a in page.having("g", "kill")] == ["chief-0"]
    assert [a["data-attempt"] for a in page.having("g", "restart")] == ["2"]
    assert [a["data-step"] for a in page.having("g", "resume")] == ["5"]
    assert [a["data-step"] for a in page.having("g", "commit")] == ["5"]
    (figure,) = [a for t, a in page.found if a.get("id") == "goodput"]
    assert 0 < float(figure["data-goodput"]) < 1
    assert [a["data-metric"] for a in page.having("svg", "metric")] == ["loss"]
    assert "not ready to submit" in text and "last words" in text
    assert "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )


def test_a_folder_on_this_disk_gets_its_report_inside(tmp_path: Path) -> None:
    (tmp_path / "timeline").mkdir()
    assert write_report(str(tmp_path)) == str(tmp_path / "report.html")
    assert "No timeline in this folder." in (tmp_path / "report.html").read_text()


def test_a_study_s_page_has_each_trial_against_each_parameter(tmp_path: Path) -> None:
    trials = [
        {"trial_id": str(i), "parameters": {"lr": 0.1 * i, "opt": "sgd" if i % 2 else "adam"},
         "status": "SUCCEEDED", "final_metric": 1.0 / i, "started_at": T0 + i, "duration_s": 5.0}
        for i in range(1, 5)
    ]  # fmt: skip
    study = {
        "study": {"metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}]},
        "status": "SUCCEEDED",
    }
    (tmp_path / "study.json").write_text(json.dumps({**study, "trials": trials}))
    page = Elements((Path(write_report(str(tmp_path)))).read_text())
    assert sorted(a["data-parameter"] for a in page.having("svg", "scatter")) == ["lr", "opt"]
    assert len(page.having("circle", "trial-point")) == 8  # 4 trials, 2 parameters
    assert [a["data-trial"] for a in page.having("rect", "trial-bar")] == ["1", "2", "3", "4"]
