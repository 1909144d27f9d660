"""A plain-Python trainer of one epoch of vtrain.data.stream, its position saved by hand.

No framework, so no collective: each trainer saves its own `Stream.state()` at every
step as AIP_CHECKPOINT_DIR/parts/step-<S>/rank-<r>.json, and a trainer starts from the
newest step that every trainer of the job that saved it saved, merged (`--resume-from`
names another job's checkpoints). Each step reads STEP records and appends them, with
the step and the working folder, to RESULTS/<job>-rank-<r>.jsonl before saving.
`--stop-after S` ends after step S; `--die-after S` SIGKILLs this trainer there unless
it resumed (so its restart goes on).
"""

import argparse
import json
import os
import signal
from itertools import islice

import vtrain.data

STEP = 3


def newest(parts: str) -> tuple[int, dict | None]:
    """(step, merged position) of the newest step every trainer saved; (0, None) if none."""
    best: tuple[int, dict | None] = (0, None)
    for name in os.listdir(parts) if os.path.isdir(parts) else []:
        folder = os.path.join(parts, name)
        states = []
        for part in sorted(os.listdir(folder)):
            if part.endswith(".json"):
                with open(os.path.join(folder, part)) as f:
                    states.append(json.load(f))
        step = int(name.removeprefix("step-"))
        if states and len(states) == states[0]["world_size"] and step > best[0]:
            best = (step, vtrain.data.merge_states(states))
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", required=True)
    parser.add_argument("--resume-from", default=os.environ["AIP_CHECKPOINT_DIR"])
    parser.add_argument("--stop-after", type=int)
    parser.add_argument("--die-after", type=int, default=0)
    args = parser.parse_args()

    step, position = newest(os.path.join(args.resume_from, "parts"))
    data = vtrain.data.stream("training", resume=position, shuffle_seed=3, buffer=5)
    parts = os.path.join(os.environ["AIP_CHECKPOINT_DIR"], "parts")
    out = os.path.join(os.environ["RESULTS"], f"{args.job}-rank-{data.rank}.jsonl")
    while step != args.stop_after and data.epoch == 0:  # None: to the epoch's end
        batch = list(islice(data, STEP))
        if not batch:
            break
        step += 1
        with open(out, "a") as f:
            line = {"step": step, "ids": [r["id"] for r in batch], "cwd": os.getcwd()}
            f.write(json.dumps(line) + "\n")
        folder = os.path.join(parts, f"step-{step}")
        os.makedirs(folder, exist_ok=True)
        part = os.path.join(folder, f"rank-{data.rank}.json")
        with open(part + ".tmp", "w") as f:
            json.dump(data.state(), f)
        os.replace(part + ".tmp", part)  # a reader never sees half a part
        if step == args.die_after and position is None:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
