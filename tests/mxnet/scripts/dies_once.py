"""examples/mxnet/train.py, where worker 0 dies (SIGKILL) once, as a lost VM, mid-training.

It dies right after epoch DIE_AFTER is committed (the example's commits count steps),
in a run that started fresh; the restarted job resumes from there. A kill from
inside, not `--kill` at a set time: on a loaded two-core machine start-up alone
can outlast any fixed time.
"""

import os
import runpy
import signal
import sys
from pathlib import Path

from vtrain_mxnet.handle import MXNetHandle

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "mxnet" / "train.py")
DIE_AFTER = int(os.environ["DIE_AFTER"])
args = sys.argv[1:]
PER_EPOCH = int(args[args.index("--steps-per-epoch") + 1]) if "--steps-per-epoch" in args else 8
started: list[int] = []
resume, save = MXNetHandle.resume, MXNetHandle.save_checkpoint


def resume_and_note(self, net, trainer=None):  # type: ignore[no-untyped-def]
    resumed = resume(self, net, trainer)
    started.append(resumed.done)
    return resumed


def save_then_die(self, epoch, net, trainer=None):  # type: ignore[no-untyped-def]
    where = save(self, epoch, net, trainer)
    if epoch == DIE_AFTER * PER_EPOCH and started == [0]:
        self.checkpoints.wait()  # the leader's background commit of this epoch is done
        self.barrier()  # every worker is past that commit
        if (self.role, self.info.index) == ("worker", 0):
            os.kill(os.getpid(), signal.SIGKILL)
    return where


MXNetHandle.resume = resume_and_note  # type: ignore[method-assign]
MXNetHandle.save_checkpoint = save_then_die  # type: ignore[method-assign]
sys.argv = [EXAMPLE, *sys.argv[1:]]
runpy.run_path(EXAMPLE, run_name="__main__")
