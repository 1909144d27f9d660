# expect: ready
# The chief serves on the address its cluster variables give; the worker connects there.
from _corpus import chief, chief_address, meet, save_model, serve_once

host, port = chief_address()
if chief:
    serve_once(host, port)
else:
    assert meet(host, port)
save_model()
