# expect: ready
# run: --workers 1 --kill worker:0@1 --max-restarts 1
# Every replica uses vtrain's CheckpointManager, as documented; worker 0 is killed. A
# non-leader's saves go to vtrain's own private folder, which is not the job's.
import time

from _corpus import save_model

from vtrain import CheckpointManager

manager = CheckpointManager()
start = (manager.latest_step() or 0) + 1
for step in range(start, 31):
    time.sleep(0.05)
    manager.save(step, b"state")
save_model()
