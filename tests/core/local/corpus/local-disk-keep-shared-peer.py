# expect: ready
# The chief writes the vocabulary into AIP_CHECKPOINT_DIR, a shared place; the worker reads it.
import os

from _corpus import CKPT_DIR, chief, save_model, wait_for

vocab = os.path.join(CKPT_DIR, "vocab.txt")
if chief:
    with open(vocab, "w") as f:
        f.write("a b c")
else:
    wait_for(vocab)
    with open(vocab) as f:
        f.read()
save_model()
