"""One writer per checkpoint folder: a second one fails fast, naming the first; stale leases go.

Two real processes on each medium (a local disk, a folder with FUSE semantics,
gs:// on the emulator). The emulator ignores generation preconditions, so there
the lease is checked by reading it first, as it is everywhere; the race that
the precondition settles on real Cloud Storage cannot be played here.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from logged import warned

from vtrain import checkpoints
from vtrain.checkpoints import CheckpointManager
from vtrain.checkpoints.lease import LEASE, STALE_AFTER, Holder
from vtrain.errors import CheckpointError
from vtrain.storage import open_location
from vtrain.storage.owner import Owner

WRITER = """
    import json, sys
    from vtrain.checkpoints import CheckpointManager, lease
    from vtrain.errors import CheckpointError

    uri, options, action = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    lease.HEARTBEAT_EVERY = options.pop("heartbeat", lease.HEARTBEAT_EVERY)
    m = CheckpointManager(uri, is_leader=True, **options)
    if action == "read":  # a reader takes no lease
        print("read", m.steps(), bytes(m.restore().data).decode(), flush=True)
        sys.exit(0)
    try:
        m.save(int(action), b"step %d" % int(action))
    except CheckpointError as e:
        print("refused:", e, flush=True)
        sys.exit(3)
    print("holding", flush=True)
    for line in sys.stdin:  # one step number a line: save it, or say why not; or "beat"
        if line.strip() == "beat":  # one heartbeat now, whatever its thread does
            lease.beat()
            print("beaten", flush=True)
            continue
        try:
            m.save(int(line), b"step %d" % int(line))
            print("saved", int(line), flush=True)
        except CheckpointError as e:
            print("refused:", e, flush=True)
"""


def start(medium, action: str, job: str, **extra: object) -> subprocess.Popen[str]:
    options = {**medium.options, **extra}
    options["environ"] = {**options.get("environ", {}), "CLOUD_ML_JOB_ID": job}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), medium.uri, json.dumps(options), action],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().rstrip("\n")


def heartbeat(medium) -> float:
    """When the lease in `medium`'s folder was last refreshed."""
    return float(
        json.loads(open_location(medium.uri, **medium.options).read_bytes(LEASE))["heartbeat"]
    )


def test_a_second_writer_fails_fast_and_a_dead_ones_lease_is_taken_over(medium) -> None:
    first = start(medium, "1", "job-a", heartbeat=0.05)
    assert line(first) == "holding"
    host = socket.gethostname()

    # Its heartbeat thread refreshes the lease (however long a loaded machine takes to run it).
    taken = heartbeat(medium)
    deadline = time.monotonic() + 60
    while heartbeat(medium) == taken:
        assert time.monotonic() < deadline, "no heartbeat in 60 s"
        time.sleep(0.05)

    # Another job's writer: refused before it touches anything, naming the first.
    code, out, _ = finish(start(medium, "2", "job-b"))
    assert code == 3
    assert re.fullmatch(
        r"refused: \S+/root: another process writes this checkpoint folder: "
        rf"pid {first.pid} on {re.escape(host)} \(job job-a, chief-0\), "
        r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, last seen \d+ s ago\. Hint: one writer per "
        r"folder: .*\n",
        out,
    ), out
    # Even the same replica of the same job, while the first still runs on this host.
    code, out, _ = finish(start(medium, "2", "job-a"))
    assert code == 3 and "another process writes this checkpoint folder" in out

    # A reader takes no lease, and the holder goes on saving.
    code, out, _ = finish(start(medium, "read", "job-b"))
    assert (code, out) == (0, "read [1] step 1\n")
    assert first.stdin is not None
    first.stdin.write("3\n")
    first.stdin.flush()
    assert line(first) == "saved 3"

    # Killed: its lease is taken over at once (its pid is gone on this host), with a note.
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    code, out, err = finish(start(medium, "4", "job-b"))
    assert (code, out) == (0, "holding\n"), err
    # One line of vtrain's logger, not a RuntimeWarning with its source line.
    assert re.fullmatch(
        rf"vtrain: \S+/root: took over the checkpoint folder's lease from pid {first.pid} on "
        r".*: that process is gone\n",
        err,
    ), err
    m = CheckpointManager(medium.uri, is_leader=False, **medium.options)
    assert m.steps() == [1, 3, 4]
    # And it gave the lease back when it ended.
    assert LEASE not in open_location(medium.uri, **medium.options).list()


_THIEF = Holder(Owner(4242, "host-b"), "job-b", "chief-0", 1.7e9, 1.7e9, "f00d").to_bytes()


@pytest.mark.parametrize(
    ("lease", "named"),
    [
        # Another host took it over (this one was frozen past STALE_AFTER, say).
        (_THIEF, r"pid 4242 on host-b \(job job-b, chief-0\), since 2023-11-14 22:13:20 UTC"),
        # Half of a lease, as a writer that truncates before it writes leaves it for a moment:
        # not this process's (its own are replaced whole), and never named as this process.
        (b"", r"its lease \(\.writer-lease\.json\) was rewritten with something that cannot be"),
    ],
    ids=["another-holder", "unreadable"],
)
def test_a_holder_that_lost_its_lease_refuses_to_save(medium, lease: bytes, named: str) -> None:
    # Its heartbeat thread sleeps through the test and the test beats by hand, so no heartbeat
    # reads the lease while it is written here: on the emulator, which ignores generation
    # preconditions, one that read just before would write over it.
    holder = start(medium, "1", "job-a", heartbeat=3600)
    assert line(holder) == "holding"
    assert holder.stdin is not None
    loc = open_location(medium.uri, **medium.options)
    loc.write_bytes(LEASE, lease)
    for command in ("beat", "2", "beat"):
        holder.stdin.write(f"{command}\n")
    holder.stdin.flush()
    assert line(holder) == "beaten"
    out = line(holder)
    assert re.fullmatch(
        rf"refused: \S+/root: another process took over this checkpoint folder: {named}.*", out
    ), out
    assert f"pid {holder.pid} on" not in out  # never this process itself
    assert line(holder) == "beaten"
    finish(holder)
    assert loc.read_bytes(LEASE) == lease  # no heartbeat wrote over it, and it was not given back
    assert CheckpointManager(medium.uri, is_leader=False, **medium.options).steps() == [1]


def _other_host_lease(folder: Path, *, job: str, seen_ago: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    holder = Holder(
        Owner(1, "host-b", 77, "boot-b"), job, "chief-0", now - 3600, now - seen_ago, "ab"
    )
    (folder / LEASE).write_bytes(holder.to_bytes())


@pytest.mark.parametrize(
    ("job", "seen_ago", "taken", "why"),
    [
        # A platform restarted this replica elsewhere: the old one is dead, taken at once.
        ("job-a", 1.0, True, "this is a restart of chief-0 of job job-a"),
        # Another job, heard from a moment ago: it may be writing.
        ("job-b", 1.0, False, None),
        # Another job, silent for longer than STALE_AFTER: gone.
        ("job-b", STALE_AFTER + 5, True, f"no heartbeat for more than {STALE_AFTER:g} s"),
    ],
)
def test_a_lease_held_on_another_host(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    job: str,
    seen_ago: float,
    taken: bool,
    why: str | None,
) -> None:
    folder = tmp_path / "c"
    _other_host_lease(folder, job=job, seen_ago=seen_ago)
    m = CheckpointManager(folder, is_leader=True, environ={"CLOUD_ML_JOB_ID": "job-a"})
    if not taken:
        with pytest.raises(CheckpointError, match=r"pid 1 on host-b \(job job-b, chief-0\), since"):
            m.save(1, b"one")
        assert os.listdir(folder) == [LEASE]  # nothing written, nothing cleaned
        return
    with warned(caplog, rf"^vtrain: .*from pid 1 on host-b .*: {re.escape(why or '')}$"):
        m.save(1, b"one")
    record = json.loads((folder / LEASE).read_bytes())
    assert (record["pid"], record["job"], record["replica"]) == (os.getpid(), "job-a", "chief-0")


def test_an_unreadable_lease_is_taken_over_with_a_note(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / LEASE).write_bytes(b"{not json")
    m = CheckpointManager(folder, is_leader=True, environ={})
    with warned(caplog, r"^vtrain: .*took over a checkpoint folder's lease that cannot"):
        m.save(1, b"one")
    assert json.loads((folder / LEASE).read_bytes())["pid"] == os.getpid()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_FIELDS = ("pid", "host", "start", "boot", "job", "replica", "since", "heartbeat", "token")


@examples(100)
@given(
    document=st.one_of(
        st.binary(max_size=200),
        _JSON.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries({}, optional={k: _JSON for k in _FIELDS}).map(
            lambda v: json.dumps(v).encode()
        ),
        st.fixed_dictionaries({k: _JSON for k in _FIELDS}).map(lambda v: json.dumps(v).encode()),
    )
)
def test_whatever_a_lease_file_holds_a_writer_saves_or_says_why(document: bytes) -> None:
    # A class of defects: a lease damaged, hand-written or from another version must never
    # end a save in a traceback. It is read as a holder (then judged), or taken over.
    holder = Holder.from_bytes(document)
    assert holder is None or isinstance(holder.owner.pid, int)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp, "c")
        folder.mkdir()
        (folder / LEASE).write_bytes(document)
        m = CheckpointManager(folder, is_leader=True, environ={})
        try:
            m.save(1, b"one")  # a takeover's note, if any, is a log record
        except CheckpointError as e:
            assert "another process writes this checkpoint folder" in str(e)
            return
        assert json.loads((folder / LEASE).read_bytes())["pid"] == os.getpid()
        del m


def test_a_folder_where_no_lease_can_be_written_is_named(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_bytes(b"not a folder")
    m = CheckpointManager(tmp_path / "a-file" / "c", is_leader=True, environ={})
    with pytest.raises(CheckpointError, match=r"a-file/c: cannot take the writer's lease: Not a"):
        m.save(1, b"one")


def test_the_checkpoints_reach_no_store_but_through_its_location() -> None:
    # The lease reads and writes through the folder's compare-and-set (Location.cas): no
    # storage client, no object of one, no branch on the kind of store.
    sources = sorted(Path(checkpoints.__file__).parent.glob("*.py"))
    assert sources
    for source in sources:
        text = source.read_text()
        assert not re.search(r"google|\bblob\b|\bbucket|GcsLocation", text), source
        assert not re.search(r"isinstance\([^)]*(store|[Ll]ocation)", text), source
