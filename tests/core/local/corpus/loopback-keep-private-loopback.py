# expect: ready
# Each replica runs a helper of its own on 127.0.0.1 and talks to it itself: no peer needs it.
import socket
import threading

from _corpus import save_model

server = socket.create_server(("127.0.0.1", 0))
threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
socket.create_connection(server.getsockname(), timeout=2).close()
server.close()
save_model()
