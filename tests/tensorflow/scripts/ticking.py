"""Run a Keras example with a line per epoch's steps, for the fault matrix's figures.

    python ticking.py EXAMPLE [ARGS...]

Runs EXAMPLE as `__main__` with one more callback in `handle.callbacks()`. It prints
`vtrain-start TIME` as the process starts, `vtrain-resume-step N` as `fit` begins
(N: the epochs `handle.resume` found done, in steps) and `vtrain-tick K TIME` after
each epoch, K being the steps this process has trained (tests/fault_cells.py).

The tick is epoch-level: ParameterServerStrategy refuses callbacks with batch
hooks, and Keras 3 runs batches ahead without them. So a step is counted at its
epoch's end: the cold start and the recovery include one epoch's batches, and a
kill mid-epoch hides the batches of that epoch from `redone`.
"""

import runpy
import sys
import time
from typing import Any

from vtrain_tensorflow.handle import TensorFlowHandle

resume, callbacks = TensorFlowHandle.resume, TensorFlowHandle.callbacks
done = 0  # epochs resume found done


def resume_and_keep(self, model, **kwargs):  # type: ignore[no-untyped-def]
    global done
    resumed = resume(self, model, **kwargs)
    done = resumed.done
    return resumed


def callbacks_and_tick(self, **kwargs):  # type: ignore[no-untyped-def]
    class Tick(self.keras.callbacks.Callback):  # type: ignore[misc, name-defined]
        count = 0

        def on_train_begin(self, logs: Any = None) -> None:
            print(f"vtrain-resume-step {done * self.params['steps']}", flush=True)

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            self.count += self.params["steps"]
            print(f"vtrain-tick {self.count} {time.time():.3f}", flush=True)

    return [*callbacks(self, **kwargs), Tick()]


TensorFlowHandle.resume = resume_and_keep  # type: ignore[method-assign]
TensorFlowHandle.callbacks = callbacks_and_tick  # type: ignore[method-assign]
print(f"vtrain-start {time.time():.3f}", flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
