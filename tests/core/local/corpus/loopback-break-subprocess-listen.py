# expect: loopback
# The chief's server runs in a subprocess, listening on 127.0.0.1.
import subprocess
import sys

from _corpus import chief, chief_address, meet, save_model

host, port = chief_address()
if chief:
    server = (
        "import socket\n"
        f"s = socket.create_server(('127.0.0.1', {port}))\n"
        "s.settimeout(1.5)\n"
        "try:\n    s.accept()\nexcept TimeoutError:\n    pass\n"
    )
    subprocess.run([sys.executable, "-c", server], check=True)
else:
    meet(host, port, 1.0)
save_model()
