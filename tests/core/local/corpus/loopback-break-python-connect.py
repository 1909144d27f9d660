# expect: loopback
# The worker reaches the chief at 127.0.0.1: here the same machine; on Vertex its own.
from _corpus import chief, chief_address, meet, save_model, serve_once

host, port = chief_address()
if chief:
    serve_once("0.0.0.0", port)
else:
    meet("127.0.0.1", port)
save_model()
