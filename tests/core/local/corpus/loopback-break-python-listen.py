# expect: loopback
# The chief serves its peers on 127.0.0.1, not on its cluster address: on Vertex the worker,
# another machine, cannot reach it.
from _corpus import chief, chief_address, meet, save_model, serve_once

host, port = chief_address()
if chief:
    serve_once("127.0.0.1", port, 1.5)
else:
    meet(host, port, 1.0)
save_model()
