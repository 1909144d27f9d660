# expect: local-disk
# A subprocess of the chief writes the shard list in its working folder; the worker looks for it.
import subprocess
import time

from _corpus import chief, save_model, wait_for

if chief:
    subprocess.run(["sh", "-c", "echo shard-0 > shards.txt"], check=True)
    time.sleep(1.0)  # the worker looks meanwhile: the job ends with the chief
else:
    wait_for("shards.txt", 0.3)
    try:
        open("shards.txt").close()
    except FileNotFoundError as e:
        print(e, flush=True)
save_model()
