# expect: ready
# run: --workers 1 --kill chief:0@0.5 --max-restarts 1
# The kill fires while the job runs; the restarted chief finishes it.
import time

from _corpus import save_model

time.sleep(0.8)
save_model()
