"""A real TCP listener on 127.0.0.1 that plays a peer which is not the one a wait expects."""

from __future__ import annotations

import socket
import threading


class Listener:
    """Accepts every connection and sends `first`; then keeps it open, or hangs up (`hang_up`).

    ``Listener(None)`` hangs up at once without a word; ``Listener(b"")`` accepts and stays
    silent; ``Listener(b"line\\n", hang_up=True)`` says its line and hangs up.
    """

    def __init__(self, first: bytes | None = b"", *, hang_up: bool = False) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = int(self.server.getsockname()[1])
        self.first = first
        self.hang_up = hang_up or first is None
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            if self.first:
                conn.sendall(self.first)
            if self.hang_up:
                conn.close()
            else:
                self.held.append(conn)

    def close(self) -> None:
        """Stop listening (the accept wakes up) and close every connection kept open."""
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        for conn in self.held:
            conn.close()
