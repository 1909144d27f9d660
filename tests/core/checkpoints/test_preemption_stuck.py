"""SIGTERM while the main thread is blocked in native code: `stuck_after` ends the process.

Python runs a signal handler only between bytecodes; a main thread waiting in native
code for a peer that is gone (ps-lite's push) never gets there. The stand-in here
is a second `pthread_mutex_lock` of a mutex the thread holds, through ctypes: POSIX
never interrupts it with EINTR, so the interpreter never gets to run the handler.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from vtrain.errors import UsageError
from vtrain.preemption import EXIT_STATUS, PreemptionHandler

PROGRAM = """
    import ctypes, os, sys, time
    from vtrain.preemption import PreemptionHandler
    r, w = os.pipe()
    os.set_blocking(w, False)
    import signal
    signal.set_wakeup_fd(w)  # someone else's wakeup fd: it must still hear the signal
    handler = PreemptionHandler(stuck_after=0.5).install()
    print("ready", flush=True)
    if sys.argv[1] == "stuck":
        libc = ctypes.CDLL(None)
        mutex = ctypes.create_string_buffer(64)  # zeros: PTHREAD_MUTEX_INITIALIZER on glibc
        libc.pthread_mutex_lock(mutex)
        libc.pthread_mutex_lock(mutex)  # a normal mutex locked twice: blocked for good
    else:
        while not handler.requested:
            time.sleep(0.01)  # one step of a loop that checks the flag
        print("heard", os.read(r, 8), flush=True)
        handler.exit()
"""


FUTEX = {"x86_64": 202, "aarch64": 98}  # the futex system call's number, as /proc shows it


def _wait_in_futex(pid: int, seconds: float = 20.0) -> None:
    """Return once `pid`'s main thread waits in a futex: the only other thread (the stuck
    watch) waits in a read and holds no lock, so that futex is the mutex. Without
    /proc/PID/syscall (another kernel), a second's wait stands in."""
    number = str(FUTEX.get(os.uname().machine))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/syscall") as f:
                if f.read().split(" ", 1)[0] == number:
                    return
        except OSError:
            time.sleep(1)
            return
        time.sleep(0.01)
    raise AssertionError(f"the main thread of {pid} never waited in the mutex")


def run(mode: str) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PROGRAM), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    if mode == "stuck":
        # A SIGTERM that came before the second lock would be handled, and then nothing
        # could end the lock: signal once the main thread waits in it.
        _wait_in_futex(process.pid)
    process.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=20)  # under the 25 s grace's own exit
    finally:
        process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_a_main_thread_stuck_in_native_code_exits_143_and_says_why() -> None:
    done = run("stuck")
    assert done.returncode == EXIT_STATUS, done.stderr
    assert "has not left native code for 0.5 s" in done.stderr, done.stderr
    assert f"exiting {EXIT_STATUS} without a save" in done.stderr


def test_a_loop_that_checks_the_flag_is_left_to_save_and_the_old_wakeup_fd_hears() -> None:
    done = run("loop")
    assert done.returncode == EXIT_STATUS, done.stderr
    assert f"heard {bytes([signal.SIGTERM])!r}" in done.stdout, done.stdout
    assert "native code" not in done.stderr, done.stderr


@pytest.mark.parametrize("value", [0, -1.5, True, "3", float("nan")])
def test_stuck_after_must_be_seconds(value: object) -> None:
    with pytest.raises(UsageError, match=r"stuck_after.*seconds > 0, or None"):
        PreemptionHandler(stuck_after=value)  # type: ignore[arg-type]


def test_uninstall_gives_the_wakeup_fd_back() -> None:
    r, w = os.pipe()
    os.set_blocking(w, False)
    previous = signal.set_wakeup_fd(w)
    try:
        handler = PreemptionHandler(stuck_after=1).install()
        assert signal.set_wakeup_fd(signal.set_wakeup_fd(-1)) != w  # its own, while installed
        handler.uninstall()
        assert signal.set_wakeup_fd(previous) == w
    finally:
        os.close(r)
        os.close(w)
