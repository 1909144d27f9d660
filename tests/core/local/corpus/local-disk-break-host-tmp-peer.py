# expect: local-disk
# The chief writes /tmp/.../vocab.txt and the worker reads it: here both see the host's /tmp;
# on Vertex each replica's /tmp is its own machine's.
from _corpus import chief, host_tmp, save_model, wait_for

vocab = host_tmp("vocab.txt")
if chief:
    with open(vocab, "w") as f:
        f.write("a b c")
else:
    wait_for(vocab)
    with open(vocab) as f:
        f.read()
save_model()
