"""The checks of `vtrain local run`'s options that need no plan: waits, programs, exec's limits."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

from vtrain.cluster.roles import CHIEF
from vtrain.errors import Problems

# The longest wait the supervisor's poll() takes: a C int of milliseconds, about 24.8 days.
MAX_SECONDS = 2_147_483.0


def seconds_problem(seconds: float, *, zero: bool) -> str | None:
    """What is wrong with a number of seconds to wait, or None; `zero` allows 0."""
    if math.isnan(seconds):
        return "is not a number"
    if seconds < 0 or (seconds == 0 and not zero):
        return "cannot be negative" if zero else "must be positive"
    if seconds > MAX_SECONDS:
        return "is longer than a wait can be"
    return None


def descriptor_limit() -> int:
    """How many file descriptors this process may open (RLIMIT_NOFILE's soft limit)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def executable(name: str) -> bool:
    """True when `name` is a program the replicas can exec: a path, or found on PATH."""
    if "\0" in name:
        return False  # os.access would raise; the NUL itself is reported
    # shutil.which would do, but importing shutil costs more than this whole check.
    paths = [name] if os.sep in name else [os.path.join(d, name) for d in os.get_exec_path()]
    return any(os.access(p, os.X_OK) and not os.path.isdir(p) for p in paths)


def unpassable(
    problems: Problems,
    command: Sequence[str],
    role_commands: Mapping[str, Sequence[str]] | None,
    role_env: Mapping[str, Mapping[str, str]] | None,
) -> None:
    """What no process can be given: a NUL in a word or variable, a variable name with "="."""
    # exec() would refuse these with a ValueError, after the job's banner and folders.
    words = {"COMMAND": command} | {
        f"the {r} pool's command": c for r, c in (role_commands or {}).items()
    }
    for where, found in words.items():
        for word in found:
            if "\0" in word:
                problem = "a NUL character (\\0) in an argument"
                problems.bad(where, problem, word, "arguments without NUL")
    for role, env in (role_env or {}).items():
        where = f"the {role} pool's env"
        for name, value in env.items():
            if not name or "=" in name or "\0" in name:
                expected = "a non-empty name without '=' or NUL"
                problems.bad(where, "not a variable name", name, expected)
            elif "\0" in value:
                # The value is not shown: it may be a credential.
                problem = f"a NUL character (\\0) in the value of {name}"
                problems.bad(where, problem, expected="values without NUL")


def checked_command(
    problems: Problems,
    command: Sequence[str],
    role_commands: Mapping[str, Sequence[str]] | None,
    role_env: Mapping[str, Mapping[str, str]] | None,
) -> list[str]:
    """The job's command (the chief pool's when each pool names its own), each checked to be
    a program every replica can run, with nothing exec refuses."""
    command = list(command)
    if command[:1] == ["--"]:
        command = command[1:]
    if role_commands:
        # A job's pools name their own commands; the chief's stands for the job's.
        command = list(role_commands.get(CHIEF) or command)
        for role, role_command in role_commands.items():
            if role != CHIEF and role_command and not executable(role_command[0]):
                problems.bad(
                    "COMMAND",
                    f"the {role} pool's command is not an executable file or on PATH",
                    role_command[0],
                    "a program every replica can run",
                )
    unpassable(problems, command, role_commands, role_env)
    if not command or not command[0]:
        problems.bad(
            "COMMAND", "no command to run", command, "a command after --, e.g. -- python train.py"
        )
    elif not executable(command[0]):
        problems.bad(
            "COMMAND",
            "not an executable file or a command on PATH",
            command[0],
            "a program every replica can run",
        )
    return command
