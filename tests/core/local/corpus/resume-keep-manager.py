# expect: ready
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Resumes from the newest committed step with vtrain's CheckpointManager.
import time

from _corpus import save_model

from vtrain import CheckpointManager

manager = CheckpointManager()
start = (manager.latest_step() or 0) + 1
for step in range(start, 41):
    print(f"training step {step}/40", flush=True)
    time.sleep(0.05)
    manager.save(step, b"state")
save_model()
