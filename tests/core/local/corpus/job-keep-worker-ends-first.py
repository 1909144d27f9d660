# expect: ready
# The worker finishes its share first and exits 0; the chief ends the job later.
import time

from _corpus import chief, save_model

if chief:
    time.sleep(0.3)
save_model()
