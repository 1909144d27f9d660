"""The live view's rules, drawn without a process: the states, the screen, the cursor moves."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from vtrain.errors import UsageError
from vtrain.local.live import Block, Display, Row, idle, plain, render, state
from vtrain.local.output import Output
from vtrain.progress.file import Snapshot

NOW = 1_000_000.0


def snap(state: str, doing: str | None = None, **fields: object) -> Snapshot:
    return Snapshot(pid=1, state=state, t=NOW, doing=doing, **fields)  # type: ignore[arg-type]


# (snapshot, vtrain's facts, the row's state)
STATES = [
    (None, {"running": False}, "starting"),
    (None, {"running": True}, "starting"),
    (snap("starting"), {"running": True}, "starting"),
    (None, {"running": True, "restarts": 1}, "restarting"),
    (snap("starting"), {"running": True, "restarts": 2}, "restarting"),
    (snap("training"), {"running": True}, "training"),
    (snap("training"), {"running": True, "restarts": 1}, "training"),
    (snap("waiting", "a torch.distributed collective (its peers)"), {"running": True},
     "waiting for a torch.distributed collective (its peers)"),
    (snap("waiting"), {"running": True}, "waiting"),
    (snap("long", "evaluation"), {"running": True}, "busy: evaluation"),
    (snap("stuck", "the data source"), {"running": True}, "stuck: the data source"),
    (snap("done"), {"running": True}, "done"),
    (None, {"running": True, "serves": True}, "serving"),
    (None, {"running": True, "trains": False}, "running"),  # an evaluator: it reports nothing
    (None, {"running": True, "age": 30.0}, "running"),  # a trainer that never configured vtrain
    (None, {"running": True, "age": 29.0}, "starting"),
    (snap("training"), {"running": True, "frozen": True}, "frozen (SIGSTOP)"),
    (snap("training"), {"running": True, "stopping": True}, "stopping"),
    (None, {"running": False, "exit_code": 0}, "done"),
    (None, {"running": False, "exit_code": -15, "after_success": True}, "done"),
    (None, {"running": False, "exit_code": 1}, "exited 1"),
    (None, {"running": False, "exit_code": -9, "stopping": True}, "stopped (-9)"),
]  # fmt: skip


@pytest.mark.parametrize(("snapshot", "facts", "expected"), STATES)
def test_a_row_s_state_is_what_vtrain_knows_then_what_the_trainer_reports(
    snapshot: Snapshot | None, facts: dict[str, object], expected: str
) -> None:
    assert state(snapshot, **facts) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("t", "last", "now", "expected"),
    [
        (NOW, None, NOW, None),  # no progress yet
        (NOW, NOW - 0.2, NOW + 0.9, 0.2),  # a fresh file: as of its writing
        (NOW, NOW - 0.2, NOW + 10.0, 10.2),  # no longer written (frozen): it ages
    ],
)
def test_idle_is_the_time_since_the_last_progress(
    t: float, last: float | None, now: float, expected: float | None
) -> None:
    found = idle(Snapshot(pid=1, state="training", t=t, last=last), now)
    assert found == (None if expected is None else pytest.approx(expected))


ROWS = [
    Row("chief-0", "training", step=120, rate=41.25, commit=100, idle=0.25, reports=True),
    Row("worker-0", "waiting for a torch.distributed collective (its peers)", step=119,
        rate=40.0, idle=12.4, reports=True),
    Row("ps-0", "serving"),
    Row("evaluator-0", "starting"),
]  # fmt: skip


def test_render_draws_a_rule_a_header_and_a_row_per_replica_in_columns() -> None:
    lines = render(ROWS, 160, 40)
    assert lines == [
        "-" * len(lines[3]),  # as long as the longest line
        "replica      step  steps/s  commit   idle  state",
        "chief-0       120     41.2     100  0.2 s  training",
        "worker-0      119     40.0       -   12 s  waiting for a torch.distributed collective "
        "(its peers)",
        "ps-0            -        -       -      -  serving",
        "evaluator-0     -        -       -      -  starting",
    ]


def test_render_cuts_each_line_to_the_width_and_keeps_room_above_it() -> None:
    narrow = render(ROWS, 40, 40)
    assert max(map(len, narrow)) == 39  # no line reaches the last column (no wrap)
    assert narrow[3].startswith("worker-0      119")
    short = render(ROWS, 160, 7)  # 7 lines: 3 spare, the rule, the header: room for 2
    assert short[2].startswith("chief-0")
    assert short[3:] == ["... and 3 more replicas"]


def test_plain_says_where_each_reporting_trainer_stands() -> None:
    assert plain(ROWS) == [
        "chief-0: training, step 120, 41.2 steps/s, last commit 100, last progress 0.2 s ago",
        "worker-0: waiting for a torch.distributed collective (its peers), step 119, "
        "40.0 steps/s, last progress 12 s ago",
    ]


def test_the_block_erases_what_it_drew_and_draws_once() -> None:
    block = Block()
    assert block.erase() == block.draw() == ""  # nothing to draw yet
    block.lines = ["a", "b", "c"]
    assert block.draw() == "a\nb\nc"
    assert block.drawn and block.draw() == ""  # already there
    assert block.erase() == "\r\033[2A\033[J"  # back to its first line, and clear below
    assert not block.drawn and block.erase() == ""
    block.lines = ["one"]
    block.draw()
    assert block.erase() == "\r\033[J"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_lines_go_above_the_view_and_the_end_erases_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    screen = Terminal()
    output = Output(["chief-0"], str(tmp_path), screen, colour=False, display=Display())
    assert output.progress_every == 0.5
    output.progress([Row("chief-0", "training", step=3)])
    output.flush()
    drawn = screen.getvalue()
    row = "chief-0     3        -       -     -  training"
    assert drawn.endswith(f"\nreplica  step  steps/s  commit  idle  state\n{row}")
    output.line("chief-0", b"hello")
    output.flush()
    after = screen.getvalue()[len(drawn) :]
    # Erased (two lines up from its last), the line, the view again below it.
    assert after.startswith("\r\033[2A\033[Jchief-0 | hello\n---")
    output.end_progress()
    output.write("summary\n")
    output.flush()
    assert screen.getvalue().endswith("training\r\033[2A\033[Jsummary\n")


def test_elsewhere_or_plain_the_view_is_a_progress_line_per_trainer(tmp_path: Path) -> None:
    stream = io.StringIO()
    output = Output(["chief-0"], str(tmp_path), stream, colour=False, display=Display())
    assert output.progress_every == 30.0
    output.progress([Row("chief-0", "training", step=3, reports=True)])
    assert stream.getvalue() == "vtrain  | chief-0: training, step 3\n"
    every = Display.from_options(plain=True, progress_every=5)
    assert Output(["chief-0"], str(tmp_path), Terminal(), display=every).progress_every == 5


def test_noise_goes_to_the_log_alone_unless_verbose(tmp_path: Path) -> None:
    lines = [b"GPU available: False, used: False", b"Epoch 1/5"]
    for verbose, shown in [(False, ["Epoch 1/5"]), (True, [line.decode() for line in lines])]:
        stream = io.StringIO()
        display = Display.from_options(verbose=verbose)
        output = Output(["chief-0"], str(tmp_path), stream, colour=False, display=display)
        for line in lines:
            output.line("chief-0", line)
        output.close()
        assert stream.getvalue() == "".join(f"chief-0 | {line}\n" for line in shown)
        assert (tmp_path / "replica-logs" / "chief-0.log").read_bytes() == b"".join(
            line + b"\n" for line in lines
        )


@pytest.mark.parametrize(
    ("every", "problem"),
    [(0.0, "must be positive"), (-1.0, "must be positive"), (float("nan"), "is not a number")],
)
def test_a_bad_progress_period_is_refused(every: float, problem: str) -> None:
    with pytest.raises(UsageError, match=rf"--progress-every.*{problem}"):
        Display.from_options(progress_every=every)
