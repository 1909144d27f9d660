# expect: kill
# run: --workers 1 --kill chief:0@0.5 --kill worker:0@30 --max-restarts 1
# The first kill fires and the chief starts again; the second is after the job's end.
import time

from _corpus import save_model

time.sleep(0.8)
save_model()
