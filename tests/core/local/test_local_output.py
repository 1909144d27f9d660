"""Prefixed, coloured replica output, the per-replica log files, and the summary table."""

from __future__ import annotations

import io
from pathlib import Path

from vtrain.local.notes import Notes
from vtrain.local.output import Output, log_path
from vtrain.local.result import JobResult, ReplicaResult


def test_lines_are_prefixed_and_logged(tmp_path: Path) -> None:
    stream = io.StringIO()
    out = Output(["chief-0", "worker-10"], str(tmp_path), stream, colour=False)
    out.line("chief-0", b"hello \xff")
    out.line("worker-10", b"step 1\r")
    out.note("worker-10 exited with 1; restart 1 of 5", "worker-10")
    out.close()
    assert stream.getvalue().splitlines() == [
        "chief-0   | hello \ufffd",
        "worker-10 | step 1",
        "vtrain    | worker-10 exited with 1; restart 1 of 5",
    ]
    assert Path(log_path(str(tmp_path), "chief-0")).read_bytes() == b"hello \xff\n"
    assert Path(log_path(str(tmp_path), "worker-10")).read_bytes() == (
        b"step 1\r\n[vtrain] worker-10 exited with 1; restart 1 of 5\n"
    )
    assert "replica-logs" in log_path(str(tmp_path), "chief-0")


def test_held_notes_come_out_first_in_order_redacted(tmp_path: Path) -> None:
    # The job's header is held while the replicas start (no `logging` or redaction CPU then),
    # and comes out before anything else once released (at a replica's first line, or soon).
    stream = io.StringIO()
    out = Output(["chief-0"], str(tmp_path), stream, colour=False)
    note = Notes(out)
    note.hold()
    note("job j in /o: chief-0 127.0.0.2:1")
    note("note: token=hunter2", "chief-0")
    assert stream.getvalue() == ""
    note.release()
    out.line("chief-0", b"step 1")
    note("chief-0 finished", "chief-0")
    out.close()
    assert stream.getvalue().splitlines() == [
        "vtrain  | job j in /o: chief-0 127.0.0.2:1",
        "vtrain  | note: token=***",
        "chief-0 | step 1",
        "vtrain  | chief-0 finished",
    ]
    log = Path(log_path(str(tmp_path), "chief-0")).read_text()
    assert log == "[vtrain] note: token=***\nstep 1\n[vtrain] chief-0 finished\n", log


def test_colour_only_when_asked_or_on_a_terminal(tmp_path: Path) -> None:
    stream = io.StringIO()
    out = Output(["chief-0", "worker-0"], str(tmp_path), stream, colour=True)
    out.line("chief-0", b"a")
    out.line("worker-0", b"b")
    out.close()
    first, second = stream.getvalue().splitlines()
    assert first.startswith("\033[36mchief-0") and first.endswith("\033[0ma")
    assert second.startswith("\033[33mworker-0")
    plain = io.StringIO()  # not a terminal: no colour by default
    Output(["chief-0"], str(tmp_path), plain).close()
    out = Output(["chief-0"], str(tmp_path), plain)
    out.line("chief-0", b"x")
    out.close()
    assert "\033" not in plain.getvalue()


def test_summary_table() -> None:
    result = JobResult(
        outcome="failed",
        status=3,
        reason="worker-0 exited with 3 after 5 restarts",
        replicas=(
            ReplicaResult("chief-0", 0, -15, True, 12.34),
            ReplicaResult("worker-0", 5, 3, False, 2.0),
            ReplicaResult("ps-0", 0, -9, False, 12.3),
        ),
    )
    assert result.table().splitlines() == [
        "replica   restarts  exit status        wall time",
        "--------  --------  -----------------  ---------",
        "chief-0   0         SIGTERM (stopped)  12.3 s",
        "worker-0  5         3                  2.0 s",
        "ps-0      0         SIGKILL            12.3 s",
        "job failed (exit status 3): worker-0 exited with 3 after 5 restarts",
    ]


class _SeesReplica(io.StringIO):
    """A terminal that notes, for the job's header, whether the replica had ended by then."""

    def __init__(self, ended: Path) -> None:
        super().__init__()
        self.ended = ended
        self.header_before_the_end: bool | None = None

    def write(self, text: str) -> int:
        if self.header_before_the_end is None and "vtrain  | job " in text:
            self.header_before_the_end = not self.ended.exists()
        return super().write(text)


def test_a_silent_job_shows_its_header_soon_after_its_start_not_at_its_end(
    tmp_path: Path,
) -> None:
    import sys

    from vtrain.local import Plan, run_job

    ended = tmp_path / "ended"
    script = f"import time; time.sleep(3); open({str(ended)!r}, 'w').close()"
    stream = _SeesReplica(ended)
    plan = Plan.from_options([sys.executable, "-c", script], output_dir=str(tmp_path / "out"))
    assert run_job(plan, stream=stream).status == 0, stream.getvalue()
    assert stream.header_before_the_end is True, stream.getvalue()
