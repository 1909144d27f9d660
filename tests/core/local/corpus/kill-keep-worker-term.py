# expect: ready
# run: --workers 1 --kill worker:0@0.5:TERM --max-restarts 1
# A preemption of the worker: it leaves at SIGTERM, is restarted, and the job finishes.
import time

from _corpus import chief, save_model

time.sleep(1.2 if chief else 0.8)
save_model()
