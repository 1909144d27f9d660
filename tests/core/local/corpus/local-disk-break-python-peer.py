# expect: local-disk
# The chief writes the vocabulary into its working folder; the worker reads it there: on
# Vertex that is another machine's disk.

import time

from _corpus import chief, save_model, wait_for

if chief:
    with open("vocab.txt", "w") as f:
        f.write("a b c")
    time.sleep(1.0)  # the worker looks meanwhile: the job ends with the chief
else:
    wait_for("vocab.txt", 0.3)
    try:
        open("vocab.txt").close()
    except FileNotFoundError as e:
        print(e, flush=True)
save_model()
