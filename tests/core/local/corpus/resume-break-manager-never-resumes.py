# expect: resume
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Commits a checkpoint at every step with vtrain's CheckpointManager, and never resumes:
# after the kill, the restart trains again from step 1 (its log says `training step 1/40`).
import time

from _corpus import save_model

from vtrain import CheckpointManager

manager = CheckpointManager()
for step in range(1, 41):
    print(f"training step {step}/40", flush=True)
    time.sleep(0.05)
    manager.save(step, b"state")
save_model()
