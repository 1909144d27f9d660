# expect: ready
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# env: AIP_TRAINING_DATA_URI=inputs/data/*.jsonl
# Exact resume with a relative data URI, as every README data example writes it: the
# position is committed with each record and the restart goes on from it, each record once.
import json
import os
import time

from _corpus import CKPT_DIR, save_model

from vtrain import CheckpointManager
from vtrain.data import merge_states, stream

manager = CheckpointManager()
position, done = None, 0
found = manager.restore()
if found is not None:
    with found:
        position, done = json.loads(bytes(found.data)), found.step
data = stream("training", resume=position)
with open(os.path.join(CKPT_DIR, "seen.txt"), "a") as seen:
    for step, record in enumerate(data, start=done + 1):
        time.sleep(0.1)
        seen.write(f"{record}\n")
        seen.flush()
        manager.save(step, json.dumps(merge_states([data.state()])).encode())
save_model()
