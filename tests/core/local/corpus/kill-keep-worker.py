# expect: ready
# run: --workers 1 --kill worker:0@0.4 --max-restarts 1
# The worker is killed and restarted while the chief still trains.
import time

from _corpus import chief, save_model

time.sleep(1.2 if chief else 0.7)
save_model()
