"""A trainer under the plugin contract that steps at a steady pace, so its progress is written.

`Plugin.prepare` starts the watchdog, which rewrites the replica's progress file
(VTRAIN_PROGRESS_FILE) once a second; each step is `handle.step(n)`. With --noise
it first prints what frameworks print at start-up (`NOISE_LINES`), then lines that
must reach the console (`SHOWN_LINES`), as TensorFlow and Lightning would.

    stepper.py [--steps N] [--delay S] [--noise]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from vtrain import ClusterInfo
from vtrain.cluster import CHIEF
from vtrain.plugins.base import Handle, Plugin

# Real lines: TensorFlow 2.20 and Lightning 2.5 on a machine without GPU.
NOISE_LINES = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1796524236.907679    5227 port.cc:153] oneDNN custom operations are on. You "
    "may see slightly different numerical results due to floating-point round-off errors",
    "I0000 00:00:1796524236.910402    5227 cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "GPU available: False, used: False",
    "\N{ELECTRIC LIGHT BULB} Tip: For seamless cloud logging and experiment tracking, try "
    "installing [litlogger](https://pypi.org/project/litlogger/) to enable LitLogger",
)
SHOWN_LINES = (
    "E0000 00:00:1796524226.501777    5038 cuda_platform.cc:52] failed call to cuInit: "
    "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "RuntimeError: a real error",
)


class StepperPlugin(Plugin):
    """Trainers only, by hand."""

    name = "stepper"

    def configure(self, info: ClusterInfo | None = None, **options: Any) -> Handle:
        """Nothing to set up: the loop below steps by hand."""
        info = self.prepare(info, None)
        return Handle(info, is_leader=info.role == CHIEF, environ=os.environ)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--delay", type=float, default=0.1)
    p.add_argument("--noise", action="store_true")
    a = p.parse_args()
    handle = StepperPlugin().configure()
    if a.noise:
        for line in (*NOISE_LINES, *SHOWN_LINES):
            print(line, file=sys.stderr, flush=True)
    for step in range(1, a.steps + 1):
        time.sleep(a.delay)
        handle.step(step)
        if step % 10 == 0:
            print(f"at step {step}", flush=True)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
