"""A replica that resumes the job's checkpoints, commits the next step and says where it was.

argv: RESULTS_FOLDER. Every replica writes <role>-<index>.json there: the step and bytes it
resumed. Then the leader commits step (resumed + 1), bytes naming this run's output folder,
once every replica has written: none of them may resume the new step instead.
"""

import json
import os
import sys
import time
from pathlib import Path

import vtrain

me = vtrain.ClusterInfo.from_env()
manager = vtrain.CheckpointManager()
found = manager.restore()
step, held = (0, None) if found is None else (found.step, bytes(found.data).decode())
if found is not None:
    found.close()
results = Path(sys.argv[1])
(results / f"{me.role}-{me.index}.json").write_text(
    json.dumps({"resumed": step, "held": held, "from": os.environ.get("VTRAIN_RESUME_FROM")})
)
if manager.is_leader:
    while len(list(results.glob("*.json"))) < me.num_trainers:
        time.sleep(0.05)
    manager.save(step + 1, os.environ["VTRAIN_OUTPUT_DIR"].encode())
