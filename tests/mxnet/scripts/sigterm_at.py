"""examples/mxnet/train.py, where this process gets SIGTERM (a preemption) once, mid-epoch.

SIGTERM_AT=K: the signal comes right after the K-th trainer step of a run that
started fresh. A signal from inside, not `--kill` at a set time: on a loaded
two-core machine start-up alone can outlast any fixed time. SIGTERM_RANK=R: only
the worker of MXNet rank R gets it (every process does without it).
"""

import os
import runpy
import signal
import sys
from pathlib import Path

from vtrain_mxnet.handle import MXNetHandle

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "mxnet" / "train.py")
SIGTERM_AT = int(os.environ["SIGTERM_AT"])
SIGTERM_RANK = os.environ.get("SIGTERM_RANK")
resume, trainer = MXNetHandle.resume, MXNetHandle.trainer
started: list[int] = []
count = 0


def resume_and_note(self, net, trainer=None):  # type: ignore[no-untyped-def]
    resumed = resume(self, net, trainer)
    started.append(resumed.done)
    return resumed


def signalling_trainer(self, *a, **kw):  # type: ignore[no-untyped-def]
    made = trainer(self, *a, **kw)
    step = made.step
    if SIGTERM_RANK is not None and str(self.rank) != SIGTERM_RANK:
        return made

    def step_and_signal(*sa, **skw):  # type: ignore[no-untyped-def]
        global count
        count += 1
        if count == SIGTERM_AT and started == [0]:
            os.kill(os.getpid(), signal.SIGTERM)  # during the step, as a notice would come
        step(*sa, **skw)

    made.step = step_and_signal
    return made


MXNetHandle.resume = resume_and_note  # type: ignore[method-assign]
MXNetHandle.trainer = signalling_trainer  # type: ignore[method-assign]
sys.argv = [EXAMPLE, *sys.argv[1:]]
runpy.run_path(EXAMPLE, run_name="__main__")
