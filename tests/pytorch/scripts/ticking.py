"""Run a PyTorch example with a line per optimizer step, for the fault matrix's figures.

    python ticking.py EXAMPLE [ARGS...]

Runs EXAMPLE as `__main__` and prints `vtrain-tick K TIME` after the K-th optimizer
step of this process (every optimizer, through torch's global hook, so Lightning's
too), TIME being time.time(): the tests read which step a replica had reached when
it was killed, and when it trained again after the restart. TICK_DELAY=s sleeps
s seconds after each step (for an example without --step-delay).
"""

import os
import runpy
import sys
import time

from torch.optim.optimizer import register_optimizer_step_post_hook

DELAY = float(os.environ.get("TICK_DELAY", "0"))
count = 0


def tick(optimizer: object, args: object, kwargs: object) -> None:
    global count
    count += 1
    print(f"vtrain-tick {count} {time.time():.3f}", flush=True)
    if DELAY:
        time.sleep(DELAY)


register_optimizer_step_post_hook(tick)
print(f"vtrain-start {time.time():.3f}", flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
