# expect: ready
# run: --workers 1 --max-restarts 1
# The chief fails once (a flaky read), is restarted, and the job succeeds.
import os

from _corpus import CKPT_DIR, chief, save_model

attempt = os.path.join(CKPT_DIR, "attempted.txt")
if chief and not os.path.exists(attempt):
    open(attempt, "w").close()
    raise SystemExit("flaky read: try again")
save_model()
