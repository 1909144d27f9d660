# expect: ready
# The chief serves on every address (0.0.0.0); the worker connects to the chief's address.
from _corpus import chief, chief_address, meet, save_model, serve_once

host, port = chief_address()
if chief:
    serve_once("0.0.0.0", port)
else:
    assert meet(host, port)
save_model()
