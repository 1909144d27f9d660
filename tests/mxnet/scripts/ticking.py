"""Run examples/mxnet/train.py with a line per trainer step, for the fault matrix's figures.

    python ticking.py [ARGS...]

Prints `vtrain-start TIME` as the process starts, `vtrain-resume-step N` once the
handle has resumed (N: the steps the commit had done; the example counts in steps)
and `vtrain-tick K TIME` after this process's K-th trainer step (tests/fault_cells.py).
"""

import os
import runpy
import sys
import time
from pathlib import Path

from vtrain_mxnet.handle import MXNetHandle

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "mxnet" / "train.py")
args = sys.argv[1:]
resume, trainer = MXNetHandle.resume, MXNetHandle.trainer
count = 0


def resume_and_say(self, net, trainer=None):  # type: ignore[no-untyped-def]
    resumed = resume(self, net, trainer)
    print(f"vtrain-resume-step {resumed.done}", flush=True)
    return resumed


def ticking_trainer(self, *a, **kw):  # type: ignore[no-untyped-def]
    made = trainer(self, *a, **kw)
    step = made.step

    def step_and_tick(*sa, **skw):  # type: ignore[no-untyped-def]
        global count
        step(*sa, **skw)
        count += 1
        print(f"vtrain-tick {count} {time.time():.3f}", flush=True)

    made.step = step_and_tick
    return made


MXNetHandle.resume = resume_and_say  # type: ignore[method-assign]
MXNetHandle.trainer = ticking_trainer  # type: ignore[method-assign]
print(f"vtrain-start {time.time():.3f}", flush=True)
os.environ.setdefault("PYTHONUNBUFFERED", "1")
sys.argv = [EXAMPLE, *args]
runpy.run_path(EXAMPLE, run_name="__main__")
