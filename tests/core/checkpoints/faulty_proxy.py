"""An HTTP proxy on loopback between the storage client and the emulator: a faulty, far network.

It forwards every request as it came and every response as it went, except
that the body of the first `damage` downloads of checkpoint data (`alt=media`,
commit markers aside) gets one byte flipped: what a faulty network path would
do, which the client library's own hash check cannot see on a ranged read. With
`delay`, each request waits that many seconds first: the round trip to a real
object store, which the emulator next door does not have.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


class _Server(ThreadingHTTPServer):
    request_queue_size = 64  # the client's parallel transfers all connect at once
    daemon_threads = True


class FaultyProxy:
    """Start with `with FaultyProxy(upstream, damage=N) as proxy:`; `proxy.url` is its URL."""

    def __init__(self, upstream: str, *, damage: int = 0, delay: float = 0.0) -> None:
        self.upstream = urlsplit(upstream)
        self.damage_left = damage
        self.delay = delay
        self.media_gets = 0
        """Downloads of checkpoint data (not of markers) so far."""
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                if proxy.delay:
                    time.sleep(proxy.delay)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                with proxy._upstream_slots:
                    upstream = http.client.HTTPConnection(
                        proxy.upstream.hostname, proxy.upstream.port, timeout=60
                    )
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    response = upstream.getresponse()
                    data = response.read()
                    upstream.close()
                path = unquote(self.path)
                media = self.command == "GET" and "alt=media" in path
                if media and "COMMIT.json" not in path and data:
                    with proxy._lock:
                        proxy.media_gets += 1
                        if proxy.damage_left > 0:
                            proxy.damage_left -= 1
                            data = bytes([data[0] ^ 0x01]) + data[1:]
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

            def log_message(self, *args: object) -> None:
                pass

        # The emulator serves one request at a time and listens with a backlog of 5: more
        # connections at once would only have their SYNs dropped and retried a second later.
        self._upstream_slots = threading.Semaphore(4)
        self._server = _Server(("127.0.0.1", 0), Handler)
        # shutdown() waits for the loop's next poll: 0.5 s by default.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FaultyProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
