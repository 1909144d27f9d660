"""The job's keeper: one process that starts every replica, so that nothing outlives vtrain.

A replica, and a daemon it leaves (forked twice, in a session of its own), must
die when vtrain dies, even by SIGKILL. The kernel's parent-death signal
(PR_SET_PDEATHSIG) is lost at every fork, and an orphan goes to the nearest
living subreaper: when vtrain itself is that subreaper and dies, the daemons go
to init. So a process that outlives vtrain must be their ancestor: the keeper,
a fork of vtrain's fork (no new interpreter: about a millisecond each). It
starts each replica with posix_spawn, is a subreaper that their orphans come
back to, gets SIGTERM when its parent dies (PR_SET_PDEATHSIG; or sees the socket
to vtrain end) and then kills every process under it. One keeper per job, not a
guard per replica: a fresh interpreter per replica cost about 20 ms of CPU each.

Between vtrain and the keeper stands the keeper's guard (`vtrain.local.guard`),
so that no two of the three dying together by SIGKILL leave a replica behind.

vtrain asks over a socket pair: start this command (its output pipe passed
along), signal that replica's process group, end. The keeper answers each start
and reports each replica's exit. It reaps a replica itself, after killing what
the replica left in its group, and signals only replicas it has not reaped: a
pid it signals always still names the replica, never a stranger that got it.
What escaped a group (a daemon) is stopped when the job ends, or when vtrain dies.
"""

from __future__ import annotations

# `socket` turns its constants into enums as it is imported, 4 ms of every start of a job:
# the C module under it has all the keeper needs.
import _socket
import contextlib
import errno
import os
import select
import signal
import struct

from vtrain.local.frames import Frames, frame
from vtrain.local.guard import ENDS, guard_life, leave_vtrain, run_fork
from vtrain.local.reaper import (
    SUPPORTED,
    become_subreaper,
    kill_group,
    set_parent_death_signal,
    stop_descendants,
)
from vtrain.local.serving import ServingFiles
from vtrain.local.title import set_title

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

_INT = struct.Struct("i")
_CHUNK = 65536
# A replica gets these at their defaults, whatever vtrain's caller ignored (nohup, `&`):
# a replica runs as it would on its own machine. Python ignores the first two.
_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ, *ENDS, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_CLOSE_SECONDS = 10.0
_MAX_FDS = 250  # the kernel takes at most 253 descriptors in one message (SCM_MAX_FD)


class KeeperGone(Exception):
    """The keeper ended before the job did: the replicas it started are no longer watched."""


class Keeper:
    """The keeper as vtrain sees it: start replicas through it, signal them, hear them end."""

    def __init__(self, pid: int, guard: int, sock: _socket.socket) -> None:
        self.pid = pid
        self.guard = guard
        self._sock = sock
        self._frames = Frames()
        self._replies: list[tuple[Any, ...]] = []
        self._exits: list[tuple[int, int]] = []
        self._closed = False

    @classmethod
    def start(cls, private: str | None = None, job: str | None = None) -> Keeper:
        """Fork the guard, which forks the keeper; from here on it starts every replica.

        `private`: the job's private folder, which the keeper removes as it ends, so
        that a SIGKILL of vtrain does not leave it behind. `job`: the job's name in
        the two processes' titles (default: vtrain's pid).
        """
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        parent = os.getpid()
        job = job or f"pid {parent}"
        guard = os.fork()
        if guard == 0:  # the guard, and the keeper it forks: they never return into vtrain's code
            ours.close()
            run_fork(guard_life, theirs, parent, private, job, _keep)
        theirs.close()
        # The guard sends the keeper's pid as soon as it has forked it, before the keeper
        # can say anything; the replicas' watcher needs it before the first starts.
        answer = b""
        with contextlib.suppress(OSError):
            while len(answer) < _INT.size and (chunk := ours.recv(_INT.size - len(answer))):
                answer += chunk
        if len(answer) < _INT.size:  # the guard could not fork the keeper
            ours.close()
            _, status = os.waitpid(guard, 0)
            code = os.waitstatus_to_exitcode(status)
            raise OSError(code, os.strerror(code), "the keeper's fork")
        return cls(_INT.unpack(answer)[0], guard, ours)

    def fileno(self) -> int:
        """Readable when the keeper has said something: a replica's exit, or its own end."""
        return self._sock.fileno()

    def spawn(
        self, starts: Iterable[tuple[Sequence[str], Mapping[str, str], int, str | None]]
    ) -> list[int | OSError]:
        """Start each (command, env, output pipe, working folder or None for ours); for each,
        its pid or why it could not start.

        A replica leads a session and process group of its own, with exactly `env`,
        in its working folder, and its stdout and stderr on the pipe. Each start is sent
        as soon as `starts` gives it, and the answers are read after the last: the keeper
        starts the first replica on the other core while vtrain prepares the next one's
        disk and environment. When `starts` fails part way, the replicas already started
        are killed, and its error is raised.
        """
        sent: list[str] = []  # the program of each start sent
        try:
            for command, env, output, cwd in starts:
                self._send(("spawn", [(list(command), dict(env), cwd)]), [output])
                sent.append(command[0])
        except BaseException:
            with contextlib.suppress(KeeperGone):
                for pid in self._started(len(sent)):
                    if pid > 0:
                        self.signal(pid, signal.SIGKILL)
            raise
        return [
            # A negative number is the errno of a start that failed.
            OSError(-pid, os.strerror(-pid), program) if pid < 0 else pid
            for program, pid in zip(sent, self._started(len(sent)), strict=True)
        ]

    def _started(self, count: int) -> list[int]:
        """The keeper's answers to the next `count` starts: a pid each, or minus an errno."""
        pids: list[int] = []
        while len(pids) < count:
            while not self._replies:
                self.receive()
            pids.extend(self._replies.pop(0)[1])
        return pids

    def signal(self, pid: int, sig: int) -> None:
        """Send `sig` to the process group of replica `pid`, unless it has been reaped."""
        self._send(("signal", pid, int(sig)))

    def receive(self) -> None:
        """Read what the keeper has sent (blocks until something comes); KeeperGone at its end."""
        try:
            chunk = self._sock.recv(_CHUNK)
        except OSError as e:
            raise KeeperGone(str(e)) from None
        if not chunk:
            raise KeeperGone("it exited")
        for message in self._frames.feed(chunk):
            if message[0] == "exit":
                self._exits.append((message[1], message[2]))
            else:
                self._replies.append(message)

    def exits(self) -> list[tuple[int, int]]:
        """The replicas that exited since the last call: (pid, wait status), in order."""
        found, self._exits = self._exits, []
        return found

    @property
    def has_exits(self) -> bool:
        """True when `exits` has something, though the socket may have nothing more to read."""
        return bool(self._exits)

    def close(self) -> None:
        """Have the keeper stop whatever is left under it, and wait for it to end."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(KeeperGone, OSError):  # gone already: only reap it
            self._send(("close",))
            # Its end of the socket closes as it exits: wait for that, not forever.
            while select.select([self._sock], [], [], _CLOSE_SECONDS)[0]:
                if not self._sock.recv(_CHUNK):
                    break
            else:
                os.kill(self.pid, signal.SIGKILL)  # its guard stops what it leaves
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.guard, 0)
        self._sock.close()

    def _send(self, message: tuple[Any, ...], fds: Sequence[int] = ()) -> None:
        data = frame(message)
        try:
            if not fds:
                self._sock.sendall(data)
                return
            rights = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))]
            sent = self._sock.sendmsg([data], rights)
            if sent < len(data):
                self._sock.sendall(data[sent:])
        except OSError as e:
            raise KeeperGone(str(e)) from None


# -- the keeper's side -------------------------------------------------------------------


def _nothing(signum: int, frame: object) -> None:
    """A handler, so that the signal wakes the loop through the wakeup fd."""


def _keep(sock: _socket.socket, parent: int, private: str | None, job: str) -> int:
    """The keeper's life: set up, then serve vtrain until it ends or dies."""
    leave_vtrain(sock)
    set_title(f"vtrain keeper of {job}", "vtrain keeper")
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    for sig in (*ENDS, signal.SIGCHLD):
        signal.signal(sig, _nothing)
    signal.set_wakeup_fd(wake_w)
    if SUPPORTED:
        set_parent_death_signal(signal.SIGTERM)
        become_subreaper()
    replicas: set[int] = set()  # started and not reaped
    try:
        if os.getppid() == parent:  # else the guard died before the parent-death signal was set
            _serve(sock, wake_r, replicas)
    finally:
        for pid in replicas:  # where /proc cannot list the descendants, the groups at least
            kill_group(pid, signal.SIGKILL)
        stop_descendants()
        if private is not None:
            ServingFiles(private).remove()
    return 0


def _serve(sock: _socket.socket, wake: int, replicas: set[int]) -> None:
    """Answer vtrain until it says "close" or is gone (its end closed; the parent-death signal)."""
    frames = Frames()
    fds: list[int] = []  # the output pipes that came with "spawn" messages, in order
    try:
        while True:
            ready = select.select([sock.fileno(), wake], [], [])[0]
            if wake in ready:
                woken = os.read(wake, 512)  # the numbers of the signals that came
                if any(sig in woken for sig in ENDS):
                    return
                _collect(sock, replicas)
            if sock.fileno() in ready:
                data, received = _recv_fds(sock)
                if not data:
                    return
                fds.extend(received)
                for message in frames.feed(data):
                    if message[0] == "close":
                        return
                    _answer(sock, message, fds, replicas)
    except ConnectionError:  # a reply that found vtrain gone
        return


def _recv_fds(sock: _socket.socket) -> tuple[bytes, list[int]]:
    """What came, and the descriptors that came with it (as `socket.recv_fds`)."""
    data, ancillary, _, _ = sock.recvmsg(_CHUNK, _socket.CMSG_SPACE(_MAX_FDS * _INT.size))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            whole = len(payload) - len(payload) % _INT.size
            fds.extend(fd for (fd,) in _INT.iter_unpack(payload[:whole]))
    return data, fds


def _answer(
    sock: _socket.socket, message: tuple[Any, ...], fds: list[int], replicas: set[int]
) -> None:
    kind = message[0]
    if kind == "signal":
        if message[1] in replicas:
            kill_group(message[1], message[2])
        return
    # "spawn": the output pipes came with it, one per command.
    pids = []
    for argv, env, cwd in message[1]:
        output = fds.pop(0)
        try:
            pid = _spawn(argv, env, output, cwd)
        except OSError as e:
            pids.append(-(e.errno or errno.ENOEXEC))
        except ValueError:
            # A NUL or a lone surrogate in an argument or a variable (UnicodeEncodeError is a
            # ValueError): documents are checked before this, but the keeper must outlive one.
            pids.append(-errno.EILSEQ)
        else:
            replicas.add(pid)
            pids.append(pid)
        finally:
            os.close(output)
    sock.sendall(frame(("started", pids)))


def _spawn(argv: list[str], env: dict[str, str], output: int, cwd: str | None) -> int:
    """posix_spawn `argv` as a session leader in `cwd`; found on the PATH of `env`, as execvpe
    does."""
    if cwd is None:
        return _spawn_here(argv, env, output)
    # posix_spawn has no working folder to give; the keeper is one thread, so it can move
    # into the replica's folder for the spawn and back (a relative program is found there).
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.chdir(cwd)
        return _spawn_here(argv, env, output)
    finally:
        os.fchdir(here)
        os.close(here)


def _spawn_here(argv: list[str], env: dict[str, str], output: int) -> int:
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, output, 1),
        (os.POSIX_SPAWN_DUP2, output, 2),
    ]
    program = argv[0]
    paths = (
        [program]
        if os.sep in program
        else [os.path.join(d, program) for d in os.get_exec_path(env)]
    )
    error: OSError = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    for path in paths:
        try:
            return os.posix_spawn(
                path,
                argv,
                env,
                file_actions=actions,
                setsid=True,
                setsigdef=_DEFAULTS,
                setsigmask=(),
            )
        except (FileNotFoundError, NotADirectoryError):
            continue
        except PermissionError as e:  # execvpe goes on, and reports this if nothing runs
            error = e
    raise error


def _collect(sock: _socket.socket, replicas: set[int]) -> None:
    """Reap every exited child; for a replica, kill its group first, then report its exit."""
    while True:
        try:
            # WNOWAIT: learn who, but leave the zombie, whose pid still names its group.
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None:
            return
        pid = found.si_pid
        if pid in replicas:
            # Whatever the replica started in its group dies with it, as with its container.
            kill_group(pid, signal.SIGKILL)
            replicas.discard(pid)
            _, status = os.waitpid(pid, 0)
            sock.sendall(frame(("exit", pid, status)))
        else:  # an orphan that came back to us, or a member of a replica's group
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
