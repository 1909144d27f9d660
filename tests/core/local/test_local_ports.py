"""Loopback ports: free, distinct, and never handed to two concurrent runs."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vtrain.errors import LaunchError
from vtrain.local import ports as ports_module
from vtrain.local import reserve_ports


@pytest.fixture(autouse=True, params=["abstract sockets", "lock files"])
def locks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test runs with both kinds of lock: Linux's abstract sockets, and the files used
    elsewhere. True for abstract sockets."""
    abstract = request.param == "abstract sockets"
    monkeypatch.setattr(ports_module, "ABSTRACT", abstract)
    return abstract


def test_ports_are_distinct_bindable_and_below_the_ephemeral_range(
    tmp_path: Path, locks: bool
) -> None:
    low, high = ports_module.candidate_range()
    with reserve_ports(8, folder=str(tmp_path)) as ports:
        assert len(set(ports)) == 8
        assert all(low <= p < high for p in ports)
        for port in ports:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
        files = sorted(p.name for p in tmp_path.iterdir())
        assert files == ([] if locks else sorted(f"{p}.lock" for p in ports))
    assert list(tmp_path.iterdir()) == []  # released ports leave no lock files behind


def test_nested_runs_never_share_a_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A range of four ports forces the second run onto exactly the ports the first left.
    base = _free_block(4)
    monkeypatch.setattr(ports_module, "candidate_range", lambda: (base, base + 4))
    with reserve_ports(2, folder=str(tmp_path)) as first:
        with reserve_ports(2, folder=str(tmp_path)) as second:
            assert sorted(first + second) == list(range(base, base + 4))
        too_many = r"found only 2 free ports .*expected 3 free ports"
        with pytest.raises(LaunchError, match=too_many), reserve_ports(3, folder=str(tmp_path)):
            pass


def test_a_port_locked_by_another_process_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, locks: bool
) -> None:
    base = _free_block(2)
    monkeypatch.setattr(ports_module, "candidate_range", lambda: (base, base + 2))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from vtrain.local import ports\n"
            f"ports.candidate_range = lambda: ({base}, {base + 2})\n"
            f"ports.ABSTRACT = {locks}\n"
            f"with ports.reserve_ports(1, folder={str(tmp_path)!r}) as p:\n"
            "    print(p[0], flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        with reserve_ports(1, folder=str(tmp_path)) as mine:
            assert mine == (base + 1 if held == base else base,)
        holder.kill()  # a SIGKILL: the lock goes with its process
        holder.wait()
        with reserve_ports(2, folder=str(tmp_path)) as both:
            assert sorted(both) == [base, base + 1]
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_is_per_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _free_block(1)
    monkeypatch.setattr(ports_module, "candidate_range", lambda: (base, base + 1))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # Another folder (another user's) has locks of its own.
    with (
        reserve_ports(1, folder=str(tmp_path / "a")) as first,
        reserve_ports(1, folder=str(tmp_path / "b")) as second,
    ):
        assert first == second == (base,)


def test_a_port_in_use_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _free_block(2)
    monkeypatch.setattr(ports_module, "candidate_range", lambda: (base, base + 2))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", base))
        busy.listen()
        with reserve_ports(1, folder=str(tmp_path)) as mine:
            assert mine == (base + 1,)


def _free_block(n: int) -> int:
    """The first of `n` consecutive ports that are free now."""
    low, high = ports_module.candidate_range()
    for base in range(low + 1000, high - n, 97):
        if all(ports_module._bindable(p, "127.0.0.1") for p in range(base, base + n)):
            return base
    raise AssertionError("no free block of ports")
