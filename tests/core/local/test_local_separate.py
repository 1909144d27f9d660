"""Separate machines on one: each replica's loopback address, its own disk, its sockets seen."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from local_procs import MARK

from vtrain.errors import LaunchError
from vtrain.local import Plan, run_job
from vtrain.local.addresses import replica_host, separate_hosts
from vtrain.local.disks import Disks
from vtrain.local.sockets import _address, sample


@given(st.integers(0, 511), st.integers(0, 511))
def test_replica_hosts_are_distinct_loopback_addresses_clear_of_the_shared_ones(
    a: int, b: int
) -> None:
    host = replica_host(a)
    assert socket.inet_aton(host)[0] == 127
    assert host != "127.0.0.1" and not host.startswith("127.0.1.")  # hostname, XGBoost's
    assert host.rsplit(".", 1)[1] not in ("0", "255")
    assert (replica_host(b) == host) == (a == b)


def test_this_system_gives_each_replica_its_own_address() -> None:
    assert separate_hosts(3) == ("127.0.0.2", "127.0.0.3", "127.0.0.4")  # Linux routes 127/8


@given(st.ip_addresses(v=4), st.integers(0, 65535))
def test_proc_net_tcp_addresses_read_back(ip: object, port: int) -> None:
    packed = socket.inet_aton(str(ip))
    as_proc = f"{struct.unpack('<I', packed)[0]:08X}:{port:04X}"  # little-endian, as the kernel
    assert _address(as_proc) == f"{ip}:{port}"
    mapped = "0000000000000000FFFF0000" + as_proc  # an IPv4-mapped address in tcp6
    assert _address(mapped) == f"{ip}:{port}"


SERVER = """
import socket, sys, time
s = socket.create_server(("127.0.0.5", 0))
c = socket.create_connection(s.getsockname())
print(s.getsockname()[1], flush=True)
time.sleep(30)
"""


def test_the_sampler_sees_what_a_replica_session_listens_on_and_connects_to() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        found = sample({proc.pid: "worker-0"})
        assert ("worker-0", "listen", f"127.0.0.5:{port}", "0.0.0.0:0") in found
        connects = [s for s in found if s[1] == "connect" and s[3] == f"127.0.0.5:{port}"]
        assert connects and connects[0][0] == "worker-0"
        assert sample({proc.pid + 10_000_000: "nobody"}) == set()
    finally:
        proc.kill()
        proc.wait()


def test_a_disk_sees_the_code_and_lists_only_what_its_run_wrote(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "train.py").write_text("print('hi')\n")
    out = project / "vtrain-output" / "local" / "j"
    disk = Disks(str(out / "disks"), str(project)).prepare("worker-0", 1)
    work = Path(disk.work)
    assert disk.folder == str(out / "disks" / "worker-0" / "run-1")
    # The code is there; the folder holding the disks is not (it would be a loop).
    assert sorted(os.listdir(work)) == ["pkg", "train.py"]
    assert (work / "train.py").read_text() == "print('hi')\n"
    (work / "ckpt").mkdir()
    (work / "ckpt" / "1.pt").write_bytes(b"w")
    (Path(disk.tmp) / "scratch").write_text("x")
    assert disk.written() == ["tmp/scratch", "work/ckpt/1.pt"]
    env = disk.variables({"HOME": "/home/me"})
    assert env == {
        "HOME": disk.home,
        "TMPDIR": disk.tmp,
        "PWD": disk.work,
        "PYTHONUSERBASE": "/home/me/.local",
    }


@pytest.mark.parametrize("hard_links", [True, False], ids=["hard links", "no hard links"])
def test_what_a_replica_does_to_its_working_folder_stays_in_it(
    tmp_path: Path, hard_links: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "train.py").write_text("print('hi')\n")
    (project / "notes.txt").write_text("n")
    if not hard_links:  # a file system without them: each folder gets links of its own

        def refused(*args: object, **kwargs: object) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", refused)
    disks = Disks(str(tmp_path / "disks"), str(project))
    one, two = (Path(disks.prepare(name, 0).work) for name in ("worker-0", "worker-1"))
    for work in (one, two):
        assert sorted(os.listdir(work)) == ["notes.txt", "pkg", "train.py"]
        assert all(os.readlink(work / e) == str(project / e) for e in os.listdir(work))
    # With hard links both folders name the job's one link: one inode, not one each.
    same = os.lstat(one / "pkg").st_ino == os.lstat(two / "pkg").st_ino
    assert same is hard_links
    # One replica removes an entry, replaces another with its own file, writes a third.
    (one / "train.py").unlink()
    (one / "notes.txt").unlink()
    (one / "notes.txt").write_text("mine")
    (one / "new.txt").write_text("x")
    assert sorted(os.listdir(two)) == ["notes.txt", "pkg", "train.py"]
    assert (two / "train.py").read_text() == "print('hi')\n"
    assert (two / "notes.txt").read_text() == "n" == (project / "notes.txt").read_text()
    # A later disk (a restart) still sees the project as it is.
    three = Path(disks.prepare("worker-0", 1).work)
    assert sorted(os.listdir(three)) == ["notes.txt", "pkg", "train.py"]
    assert (three / "train.py").read_text() == "print('hi')\n"


def _write_home(disk: Path) -> None:
    (disk / "home" / ".cache").mkdir()


def _write_tmp(disk: Path) -> None:
    (disk / "tmp" / "scratch").write_text("x")


def _write_work(disk: Path) -> None:
    (disk / "work" / "ckpt.pt").write_bytes(b"w")


def _write_beside(disk: Path) -> None:  # next to work/, home/ and tmp/
    (disk / "core").write_bytes(b"a core dump")


def _remove_entry(disk: Path) -> None:
    (disk / "work" / "train.py").unlink()


def _replace_entry(disk: Path) -> None:  # the same names, one of them its own file now
    (disk / "work" / "notes.txt").unlink()
    (disk / "work" / "notes.txt").write_text("mine")


def _relink_entry(disk: Path) -> None:  # the same names, one a link of its own to the same place
    target = os.readlink(disk / "work" / "pkg")
    (disk / "work" / "pkg").unlink()
    (disk / "work" / "pkg").symlink_to(target)


def _swap_home(disk: Path) -> None:  # HOME an empty folder still, but a link to another place
    (disk / "home").rmdir()
    (disk / "home").symlink_to(disk.parent)


@pytest.mark.parametrize(
    "change",
    [
        _write_home,
        _write_tmp,
        _write_work,
        _write_beside,
        _remove_entry,
        _replace_entry,
        _relink_entry,
        _swap_home,
    ],
)
def test_a_used_output_dir_keeps_only_the_disks_left_as_made(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    # Each folder or link made is an inode, which costs up to half a millisecond of kernel
    # time on a busy VM: a disk its run left as it was made serves the next job as it is.
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "train.py").write_text("print('hi')\n")
    (project / "notes.txt").write_text("n")
    root = tmp_path / "job" / "disks"
    first = Disks(str(root), str(project))
    kept, changed = (Path(first.prepare(name, 0).folder) for name in ("worker-0", "worker-1"))
    first.prepare("worker-1", 1)  # a restart
    first.prepare("worker-2", 0)  # a replica the next job does not have
    for record in ("worker-0/run-0.record", "worker-1/run-1.record"):
        (root / record).write_text("bind\t127.0.0.2:1\n")
    change(changed)
    first.close()
    kept_inode = os.stat(kept).st_ino

    second = Disks(str(root), str(project))
    again, fresh = (Path(second.prepare(name, 0).folder) for name in ("worker-0", "worker-1"))
    assert os.stat(again).st_ino == kept_inode  # the same folder, not a copy
    for disk in (again, fresh):
        assert sorted(os.listdir(disk)) == ["home", "tmp", "work"]
        assert not (disk / "home").is_symlink()
        assert os.listdir(disk / "home") == os.listdir(disk / "tmp") == []
        assert sorted(os.listdir(disk / "work")) == ["notes.txt", "pkg", "train.py"]
        for entry in os.listdir(disk / "work"):  # the job's own links, hard-linked
            assert os.readlink(disk / "work" / entry) == str(project / entry)
            linked = os.lstat(disk / "work" / entry).st_ino
            assert linked == os.lstat(root / ".links" / entry).st_ino
    # The last job's restart, its record and its extra replica are not this job's; the
    # record of a run this job has again stays, for vtrain to empty (not a new file).
    assert sorted(os.listdir(root / "worker-0")) == ["run-0", "run-0.record"]
    assert sorted(os.listdir(root / "worker-1")) == ["run-0"]
    second.clean()
    second.close()
    assert sorted(os.listdir(root)) == [".links", "worker-0", "worker-1"]
    assert [p.name for p in root.parent.iterdir()] == ["disks"]  # the rest removed


def test_a_changed_project_gets_new_disks_in_a_used_output_dir(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    root = tmp_path / "job" / "disks"
    first = Disks(str(root), str(project))
    first.prepare("worker-0", 0)
    first.close()
    (project / "data.csv").write_text("1\n")
    second = Disks(str(root), str(project))
    work = Path(second.prepare("worker-0", 0).work)
    assert sorted(os.listdir(work)) == ["data.csv", "train.py"]
    second.close()
    assert [p.name for p in root.parent.iterdir()] == ["disks"]


WHERE = (
    "import json, os, tempfile; print('where ' + json.dumps([os.getcwd(), os.environ['HOME'], "
    "tempfile.gettempdir(), os.environ['MASTER_ADDR']]))"
)


def _where(stream: str) -> dict[str, list[str]]:
    return {
        m[1]: json.loads(m[2]) for m in re.finditer(r"^(\S+) +\| where (.*)$", stream, re.MULTILINE)
    }


def test_shared_disk_and_a_refused_address_run_as_before_and_say_so(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A system that refuses 127.0.0.2 (macOS): every replica shares 127.0.0.1, with a note.
    monkeypatch.setattr("vtrain.local.job.separate_hosts", lambda count: None)
    plan = Plan.from_options(
        [sys.executable, "-c", WHERE], workers=1, output_dir=str(tmp_path / "job"), shared_disk=True
    )
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark, "HOME": "/h"})
    shown = stream.getvalue()
    assert result.status == 0, shown
    where = _where(shown)
    assert where["chief-0"][0] == where["worker-0"][0] == os.getcwd()  # one disk: ours
    assert where["chief-0"][1] == where["worker-0"][1] == "/h"
    assert where["chief-0"][3] == where["worker-0"][3] == "127.0.0.1"
    assert "note: this system refuses loopback addresses other than 127.0.0.1" in shown
    assert result.verdict is not None  # the script saves no model: the one finding
    assert [(f.check, f.replica) for f in result.verdict.findings] == [("leader", "chief-0")]
    assert [n.split(":")[0] for n in result.verdict.notes] == [
        "this system refuses loopback addresses other than 127.0.0.1",
        "--shared-disk",
    ]


def test_a_disk_that_cannot_be_made_stops_the_replicas_already_started(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each replica goes to the keeper as soon as its disk is ready: when a later one's
    # fails, those already started are stopped (the `mark` fixture proves none is left).
    made = Disks.prepare

    def prepare(self: Disks, name: str, run: int) -> object:
        if name == "worker-1":
            raise PermissionError(13, "Permission denied", name)
        return made(self, name, run)

    monkeypatch.setattr(Disks, "prepare", prepare)
    code = "import time; print('up', flush=True); time.sleep(60)"
    plan = Plan.from_options(
        [sys.executable, "-c", code], workers=2, output_dir=str(tmp_path / "job")
    )
    stream = io.StringIO()
    with pytest.raises(LaunchError, match="cannot prepare worker-1's own disk .Permission denied"):
        run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    # Their logs are there all the same: what the started ones said is kept.
    logs = sorted(os.listdir(tmp_path / "job" / "replica-logs"))
    assert logs == ["chief-0.log", "worker-0.log", "worker-1.log"]


def test_each_run_gets_a_new_disk_and_its_own_address(tmp_path: Path, mark: str) -> None:
    plan = Plan.from_options(
        [sys.executable, "-c", WHERE], workers=1, output_dir=str(tmp_path / "job")
    )
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    shown = stream.getvalue()
    assert result.status == 0, shown
    where = _where(shown)
    for name in ("chief-0", "worker-0"):
        disk = tmp_path / "job" / "disks" / name / "run-0"
        assert where[name][:3] == [str(disk / "work"), str(disk / "home"), str(disk / "tmp")]
        assert where[name][3] == "127.0.0.2"  # MASTER_ADDR: the chief's own address


BINDS = "import socket; s = socket.socket(); s.bind(('127.0.0.2', 0)); s.close()"


def test_a_rerun_keeps_its_disk_and_record_file_but_none_of_what_the_last_run_did(
    tmp_path: Path,
) -> None:
    # Made once, emptied for each later job: no new inode for the probe to make at start.
    job = tmp_path / "job"
    record = job / "disks" / "chief-0" / "run-0.record"
    held: list[int] = []  # open, their inodes cannot go to a new file while the test runs
    try:
        for code in (BINDS, "pass"):
            plan = Plan.from_options([sys.executable, "-c", code], output_dir=str(job))
            stream = io.StringIO()
            assert run_job(plan, stream=stream).status == 0, stream.getvalue()
            if not held:
                assert record.read_text().startswith("bind\t127.0.0.2:")  # the probe's note
                held += [os.open(record, os.O_RDONLY), os.open(record.with_suffix(""), os.O_RDONLY)]
        assert record.read_text() == ""  # the second job did nothing of the kind
        for fd, path in zip(held, (record, record.with_suffix("")), strict=True):
            assert os.fstat(fd).st_nlink > 0 and os.path.samestat(os.fstat(fd), os.stat(path))
    finally:
        for fd in held:
            os.close(fd)


def test_an_output_dir_used_again_keeps_no_earlier_job_s_disks(tmp_path: Path) -> None:
    # Each job moves the last one's disks aside and removes them; a --shared-disk job too,
    # which keeps only its runs' records there (it once left `disks.old-PID` behind). The
    # disks a killed vtrain had moved aside go too; a live vtrain's stay.
    job = tmp_path / "job"
    gone = subprocess.Popen(["true"])
    gone.wait()
    for pid in (gone.pid, os.getpid()):
        (job / f"disks.old-{pid}" / "worker-0" / "run-0").mkdir(parents=True)
    (job / "disks").mkdir()  # this process's own aside name is taken: another is found
    living = job / f"disks.old-{os.getppid()}"
    living.mkdir()
    for shared_disk in (False, True, False, True):
        plan = Plan.from_options(
            [sys.executable, "-c", "pass"], workers=1, output_dir=str(job), shared_disk=shared_disk
        )
        stream = io.StringIO()
        assert run_job(plan, stream=stream).status == 0, stream.getvalue()
        assert sorted(p.name for p in job.glob("disks*")) == ["disks", living.name]


SEES_OLD_DISKS = (
    "import glob, os, time; pattern = os.environ['VTRAIN_OUTPUT_DIR'] + '/disks.old-*'; "
    "at_start = len(glob.glob(pattern)); start = time.monotonic()\n"
    "while glob.glob(pattern) and time.monotonic() - start < 60: time.sleep(0.05)\n"
    "print('old disks', at_start, len(glob.glob(pattern)))\n"
    # Written on its disk: the next job cannot keep this disk, it must remove it.
    "open(os.path.join(os.environ['TMPDIR'], 'scratch'), 'w').write('x')"
)


def test_the_last_job_s_disks_go_once_the_replicas_have_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Longer than a replica's start on a loaded machine: it sees the disks still there.
    monkeypatch.setattr("vtrain.local.disks.CLEAN_AFTER", 4.0)
    job = tmp_path / "job"
    for _ in range(2):
        plan = Plan.from_options([sys.executable, "-c", SEES_OLD_DISKS], output_dir=str(job))
        stream = io.StringIO()
        assert run_job(plan, stream=stream).status == 0, stream.getvalue()
    # The second job's replica found the first job's disks moved aside, not yet removed
    # (their removal waits for the replicas' start), and saw them go while it ran.
    assert "old disks 1 0" in stream.getvalue(), stream.getvalue()
