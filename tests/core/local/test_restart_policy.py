"""The platform's rules for `vtrain local run`, as the docs state them: one row each, no process.

Each row is the facts of one replica's exit, the job's rules, and what the
supervisor must do about it, with the notes it writes.
"""

from __future__ import annotations

import pytest

from vtrain.local.restart_policy import (
    HUNG_PEER,
    IMMEDIATE_SECONDS,
    NOTE,
    RESTART_JOB,
    RESTART_REPLICA,
    STOP,
    STOPPING,
    SUCCEED,
    SUCCEEDED,
    SUCCESS_GRACE_SECONDS,
    Decision,
    Exit,
    Rules,
    decide,
)
from vtrain.progress.bound import BACKSTOP_SIGNAL, STUCK_EXIT

LONE = Rules(max_restarts=5)
WHOLE_JOB = Rules(max_restarts=5, restart_job=True)
SLOW = 60.0  # seconds from a run's start to its exit: well past IMMEDIATE_SECONDS
AT_ONCE = IMMEDIATE_SECONDS / 10
USAGE = (
    b"usage: train.py [-h] [--epochs N]",
    b"train.py: error: unrecognized arguments: --epoch 3",
)
COMMITTED = (b"step 7", b"vtrain: preempted (SIGTERM): committed step 7")
PS_LITE = "MXNet workers cannot rejoin a running ps-lite job"
TERM, KILL = -15, -9
STUCK_SAID = "no progress for 21 s after step 40, waiting for the kvstore"
STUCK_TAIL = (
    b"vtrain: stuck: " + STUCK_SAID.encode() + b" (bound: the floor of 20 s); every thread's",
    b"Current thread 0x00007f0c1a2b3740 (most recent call first):",
)


def note(text: str, replica: str | None) -> tuple[str, str | None]:
    return (text, replica)


ROWS = [
    # The job succeeds when the chief exits 0.
    pytest.param(
        Exit("chief-0", 0, role="chief", age=SLOW),
        LONE,
        Decision(SUCCEED, (note("chief-0 finished", "chief-0"),), reason="chief-0 exited 0"),
        id="the chief's success ends a job with nothing else running",
    ),
    pytest.param(
        Exit("chief-0", 0, role="chief", age=SLOW, running=("worker-0", "worker-1")),
        LONE,
        Decision(
            SUCCEED,
            (
                note(
                    "chief-0 finished; the other replicas (worker-0, worker-1) have "
                    f"{SUCCESS_GRACE_SECONDS:g} s to exit before they are stopped",
                    "chief-0",
                ),
            ),
            reason="chief-0 exited 0",
            grace=SUCCESS_GRACE_SECONDS,
        ),
        id="after the chief's success the replicas that train have a grace to end by themselves",
    ),
    pytest.param(
        Exit("chief-0", 0, role="chief", age=SLOW, running=("worker-0", "ps-0"), serving=("ps-0",)),
        LONE,
        Decision(
            SUCCEED,
            (
                note(
                    "chief-0 finished; the other replicas (worker-0) have "
                    f"{SUCCESS_GRACE_SECONDS:g} s to exit before they are stopped",
                    "chief-0",
                ),
                note(
                    "stopping ps-0 at once after the chief's success (replicas that serve "
                    "never exit by themselves)",
                    None,
                ),
            ),
            reason="chief-0 exited 0",
            stop_now=("ps-0",),
            grace=SUCCESS_GRACE_SECONDS,
        ),
        id="after the chief's success the replicas that serve are stopped at once",
    ),
    pytest.param(
        Exit("chief-0", 0, role="chief", age=SLOW, running=("ps-0",), serving=("ps-0",)),
        LONE,
        Decision(
            SUCCEED,
            (
                note("chief-0 finished", "chief-0"),
                note(
                    "stopping ps-0 at once after the chief's success (replicas that serve "
                    "never exit by themselves)",
                    None,
                ),
            ),
            reason="chief-0 exited 0",
            stop_now=("ps-0",),
            grace=SUCCESS_GRACE_SECONDS,
        ),
        id="a chief whose only peers serve: they are stopped, no grace to wait out",
    ),
    pytest.param(
        Exit("evaluator-0", 0, role="evaluator", age=SLOW),
        LONE,
        Decision(NOTE, (note("evaluator-0 finished", "evaluator-0"),)),
        id="a replica other than the chief that exits 0 has finished; the job goes on",
    ),
    pytest.param(
        Exit("ps-0", 0, role="ps", stopped=True, job=SUCCEEDED),
        LONE,
        Decision(NOTE, (note("ps-0 stopped (0)", "ps-0"),)),
        id="a server stopped after the chief's success ends as stopped",
    ),
    pytest.param(
        Exit("worker-0", 3, age=SLOW, job=SUCCEEDED),
        LONE,
        Decision(NOTE, (note("worker-0 exited with 3 after the chief's success", "worker-0"),)),
        id="nothing restarts once the chief has succeeded",
    ),
    # A failing replica restarts from the beginning, alone, up to --max-restarts.
    pytest.param(
        Exit("worker-0", 1, age=SLOW),
        LONE,
        Decision(RESTART_REPLICA, (note("worker-0 exited with 1; restart 1 of 5", "worker-0"),)),
        id="a failing replica restarts alone",
    ),
    pytest.param(
        Exit("worker-0", KILL, injected=True, age=AT_ONCE),
        LONE,
        Decision(
            RESTART_REPLICA, (note("worker-0 was killed (--kill); restart 1 of 5", "worker-0"),)
        ),
        id="a replica that --kill killed restarts, however soon",
    ),
    pytest.param(
        Exit("chief-0", 1, role="chief", age=SLOW, restarts=2, killed="worker-0"),
        LONE,
        Decision(
            RESTART_REPLICA,
            (
                note(
                    "chief-0 exited with 1, as expected after worker-0's kill; restart 3 of 5",
                    "chief-0",
                ),
            ),
        ),
        id="a peer of a killed replica fails as expected, and restarts",
    ),
    pytest.param(
        Exit("worker-0", 1, age=SLOW, restarts=5),
        LONE,
        Decision(
            STOP,
            (
                note(
                    "worker-0 exited with 1 after 5 restarts (--max-restarts 5); the job fails",
                    "worker-0",
                ),
            ),
            status=1,
            reason="worker-0 exited with 1 after 5 restarts (--max-restarts 5)",
        ),
        id="--max-restarts spent: the job fails",
    ),
    pytest.param(
        Exit("worker-0", KILL, age=SLOW),
        Rules(max_restarts=0),
        Decision(
            STOP,
            (
                note(
                    "worker-0 exited with SIGKILL after 0 restarts (--max-restarts 0); the job "
                    "fails",
                    "worker-0",
                ),
            ),
            status=137,
            reason="worker-0 exited with SIGKILL after 0 restarts (--max-restarts 0)",
        ),
        id="a signal's end fails the job with the shell's status",
    ),
    pytest.param(
        Exit("ps-0", KILL, role="ps", injected=True, age=SLOW),
        LONE,
        Decision(RESTART_REPLICA, (note("ps-0 was killed (--kill); restart 1 of 5", "ps-0"),)),
        id="a parameter server that fails restarts alone too",
    ),
    # Or the whole job restarts, with --restart-job-on-worker-restart (and torchrun).
    pytest.param(
        Exit("worker-0", 1, age=SLOW, restarts=1, job_restarts=1),
        WHOLE_JOB,
        Decision(
            RESTART_JOB, (note("worker-0 exited with 1; restarting every replica", "worker-0"),)
        ),
        id="the whole-job policy restarts every replica",
    ),
    pytest.param(
        Exit("worker-0", 1, age=SLOW, restarts=5, job_restarts=5),
        WHOLE_JOB,
        Decision(
            STOP,
            (
                note(
                    "worker-0 exited with 1 after 5 restarts (--max-restarts 5); the job fails",
                    "worker-0",
                ),
            ),
            status=1,
            reason="worker-0 exited with 1 after 5 restarts (--max-restarts 5)",
        ),
        id="the whole-job policy counts the job's restarts against --max-restarts",
    ),
    # A replica restarted alone that cannot rejoin (MXNet's ps-lite): the job stops.
    pytest.param(
        Exit("worker-0", KILL, injected=True, age=SLOW, no_lone_restart=PS_LITE),
        LONE,
        Decision(
            STOP,
            (
                note(
                    f"worker-0 was killed (--kill): {PS_LITE}, so restart the whole job "
                    "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart "
                    "on Vertex)",
                    "worker-0",
                ),
            ),
            status=137,
            reason=f"worker-0 was killed (--kill): {PS_LITE}, so restart the whole job "
            "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart on "
            "Vertex)",
        ),
        id="MXNet's no lone restart: the job stops with the plugin's reason",
    ),
    pytest.param(
        Exit("worker-0", KILL, injected=True, age=SLOW, no_lone_restart=PS_LITE),
        WHOLE_JOB,
        Decision(
            RESTART_JOB,
            (note("worker-0 was killed (--kill); restarting every replica", "worker-0"),),
        ),
        id="MXNet's no lone restart: the whole-job policy restarts it all",
    ),
    # A usage error is not restarted: a restart passes the same arguments.
    pytest.param(
        Exit("chief-0", 2, role="chief", age=SLOW, tail=USAGE),
        LONE,
        Decision(
            STOP,
            (
                note(
                    "chief-0's script refused its arguments; not restarting it, as a restart "
                    "passes the same arguments: train.py: error: unrecognized arguments: --epoch 3",
                    "chief-0",
                ),
            ),
            status=2,
            reason="chief-0's script refused its arguments: train.py: error: unrecognized "
            "arguments: --epoch 3",
        ),
        id="a script that refused its arguments ends the job with its error line",
    ),
    pytest.param(
        Exit("chief-0", 2, role="chief", age=SLOW, tail=(b"Traceback", b"KeyError: 'x'")),
        LONE,
        Decision(RESTART_REPLICA, (note("chief-0 exited with 2; restart 1 of 5", "chief-0"),)),
        id="exit status 2 without a usage error restarts as any failure",
    ),
    # A command that fails at once, the same way twice, is not restarted again.
    pytest.param(
        Exit("chief-0", 2, role="chief", age=AT_ONCE),
        LONE,
        Decision(
            RESTART_REPLICA,
            (note("chief-0 exited with 2; restart 1 of 5", "chief-0"),),
            failed_at_once=2,
        ),
        id="a first failure at once restarts, remembered",
    ),
    pytest.param(
        Exit("chief-0", 2, role="chief", age=AT_ONCE, restarts=1, previous=2),
        LONE,
        Decision(
            STOP,
            (
                note(
                    f"chief-0 exited with 2 within {IMMEDIATE_SECONDS:g} s of its start, as its "
                    "previous run did; not restarting it: the command fails before it runs (see "
                    "its output above: a missing file, a bad argument, an import error?)",
                    "chief-0",
                ),
            ),
            status=2,
            reason=f"chief-0 exited with 2 within {IMMEDIATE_SECONDS:g} s of its start, as its "
            "previous run did",
        ),
        id="the same failure at once twice ends the job",
    ),
    pytest.param(
        Exit("chief-0", 1, role="chief", age=AT_ONCE, restarts=1, previous=2),
        LONE,
        Decision(
            RESTART_REPLICA,
            (note("chief-0 exited with 1; restart 2 of 5", "chief-0"),),
            failed_at_once=1,
        ),
        id="a different failure at once restarts",
    ),
    pytest.param(
        Exit("chief-0", 2, role="chief", age=SLOW, restarts=1, previous=2),
        LONE,
        Decision(RESTART_REPLICA, (note("chief-0 exited with 2; restart 2 of 5", "chief-0"),)),
        id="a slow failure after one at once restarts, and is not remembered",
    ),
    # The job is stopping (a failure under the whole-job policy, --timeout, Ctrl-C).
    pytest.param(
        Exit("worker-0", TERM, stopped=True, job=STOPPING),
        WHOLE_JOB,
        Decision(NOTE, (note("worker-0 stopped (SIGTERM)", "worker-0"),)),
        id="a replica stopped with the job is only noted",
    ),
    pytest.param(
        Exit("worker-0", 143, job=STOPPING, tail=COMMITTED),
        WHOLE_JOB,
        Decision(NOTE, (note("worker-0 preempted (SIGTERM): committed step 7", "worker-0"),)),
        id="a replica that committed its preemption save as the job stops says so",
    ),
    pytest.param(
        Exit("worker-0", 143, injected=True, age=SLOW, tail=COMMITTED),
        LONE,
        Decision(
            RESTART_REPLICA,
            (note("worker-0 preempted (SIGTERM): committed step 7; restart 1 of 5", "worker-0"),),
        ),
        id="a preempted replica that committed restarts",
    ),
    # A trainer its watchdog ended (exit 75): restarted as any failure, its line quoted; alone,
    # with the hint that a hung peer is found again (no platform restarts a machine that hangs).
    pytest.param(
        Exit("chief-0", STUCK_EXIT, role="chief", age=SLOW, tail=STUCK_TAIL),
        LONE,
        Decision(
            RESTART_REPLICA,
            (
                note(
                    f"chief-0 was stuck ({STUCK_SAID}): its watchdog ended it (exit 75); "
                    "restart 1 of 5" + HUNG_PEER,
                    "chief-0",
                ),
            ),
        ),
        id="a stuck trainer restarts alone, with the hint for a hung peer",
    ),
    pytest.param(
        Exit("chief-0", STUCK_EXIT, role="chief", age=SLOW, tail=STUCK_TAIL),
        WHOLE_JOB,
        Decision(
            RESTART_JOB,
            (
                note(
                    f"chief-0 was stuck ({STUCK_SAID}): its watchdog ended it (exit 75); "
                    "restarting every replica",
                    "chief-0",
                ),
            ),
        ),
        id="a stuck trainer restarts the whole job: the hung peer too",
    ),
    pytest.param(
        Exit("worker-0", STUCK_EXIT, age=SLOW, restarts=5, tail=STUCK_TAIL),
        LONE,
        Decision(
            STOP,
            (
                note(
                    f"worker-0 was stuck ({STUCK_SAID}): its watchdog ended it (exit 75) after "
                    "5 restarts (--max-restarts 5)" + HUNG_PEER + "; the job fails",
                    "worker-0",
                ),
            ),
            status=75,
            reason=f"worker-0 was stuck ({STUCK_SAID}): its watchdog ended it (exit 75) after "
            "5 restarts (--max-restarts 5)" + HUNG_PEER,
        ),
        id="a trainer stuck past its restarts stops the job, saying to restart it whole",
    ),
    pytest.param(
        Exit("worker-0", -BACKSTOP_SIGNAL, age=SLOW),
        WHOLE_JOB,
        Decision(
            RESTART_JOB,
            (
                note(
                    "worker-0 was stuck (in C code that holds the GIL, past its bound; its "
                    "watchdog's backstop ended it); restarting every replica",
                    "worker-0",
                ),
            ),
        ),
        id="a trainer its watchdog's backstop ended is stuck too",
    ),
    pytest.param(
        Exit("worker-0", STUCK_EXIT, age=SLOW, injected=True),
        WHOLE_JOB,
        Decision(
            RESTART_JOB,
            (note("worker-0 was killed (--kill); restarting every replica", "worker-0"),),
        ),
        id="a killed replica's own 75 is its kill",
    ),
]


@pytest.mark.parametrize(("exit", "rules", "expected"), ROWS)
def test_the_platforms_rules(exit: Exit, rules: Rules, expected: Decision) -> None:
    assert decide(exit, rules) == expected
