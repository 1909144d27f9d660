# expect: loopback
# The chief listens on 127.0.0.1 from C (as a framework's native server does): the audit
# hook never sees it, the socket table does.
import ctypes
import socket
import struct
import time

from _corpus import chief, chief_address, meet, save_model

host, port = chief_address()
if chief:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    address = struct.pack(
        "=HH4s8x", socket.AF_INET, socket.htons(port), socket.inet_aton("127.0.0.1")
    )
    if libc.bind(fd, address, len(address)) or libc.listen(fd, 1):
        raise OSError(ctypes.get_errno(), "bind/listen")
    time.sleep(1.5)  # the worker cannot come: it looks for the chief at its cluster address
    libc.close(fd)
else:
    meet(host, port, 1.0)
save_model()
