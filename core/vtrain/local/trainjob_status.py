"""`--platform trainjob`: the TrainJob's status server, served on loopback with real TLS.

Kubeflow Trainer's controller runs a status server (KEP-2779) and gives every
node its URL, the CA that signed its certificate and a token (files, as the
projected ones are). A rehearsal does the same: a CA and a server certificate
for 127.0.0.1, made per job (the `local-trainjob` extra: `cryptography`), and a
random token, all in `<job folder>/trainjob-status/` with the key and the token
readable by their owner alone. Each post is checked as the Trainer's server
checks it (`vtrain.trainjob.status_checks`): the path, the token, the size, the
schema. What it took last is the job's `status.trainerStatus`, shown in the
summary with every refusal.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import secrets
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vtrain.errors import MissingExtraError
from vtrain.log import logger
from vtrain.trainjob.status_checks import MOST_BYTES, PATH, problem, shown

EXTRA = "local-trainjob"
FOLDER = "trainjob-status"
NAMESPACE = "default"
POLL = 0.05
"""Seconds between the server loop's checks for `stop`."""
_log = logger(__name__)


class StatusServer:
    """A TrainJob's status endpoint on 127.0.0.1, and what it took."""

    def __init__(self, folder: str, name: str, namespace: str = NAMESPACE) -> None:
        self.folder = folder
        self.path = PATH.format(namespace=namespace, name=name)
        self.posts: list[dict[str, Any]] = []
        self.refused: list[tuple[int, str]] = []
        self.refuse_with: int | None = None
        """Answer every post with this status (a test's server that refuses)."""
        self._lock = threading.Lock()
        os.makedirs(folder, exist_ok=True)
        self.ca_file, cert, key = _certificates(folder)
        self.token_file = os.path.join(folder, "token")
        _private(self.token_file, secrets.token_urlsafe(32).encode())
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.http.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.http.socket = context.wrap_socket(self.http.socket, server_side=True)
        # shutdown() waits for the loop's next poll (0.5 s by default), at every job's end.
        self._thread = threading.Thread(
            target=self.http.serve_forever,
            args=(POLL,),
            name="vtrain-trainjob-status-server",
            daemon=True,
        )

    @classmethod
    def start(cls, job_folder: str, name: str) -> StatusServer:
        """Serve the status of TrainJob `name` until `stop`."""
        server = cls(os.path.join(job_folder, FOLDER), name)
        server._thread.start()
        _log.debug("TrainJob status server on %s", server.url)
        return server

    @property
    def url(self) -> str:
        """KUBEFLOW_TRAINER_SERVER_URL: the TrainJob's status endpoint."""
        return f"https://127.0.0.1:{self.http.server_address[1]}{self.path}"

    def variables(self) -> dict[str, str]:
        """What the Trainer sets on every node: the URL, and the CA's and the token's files."""
        return {
            "KUBEFLOW_TRAINER_SERVER_URL": self.url,
            "KUBEFLOW_TRAINER_SERVER_CA_CERT": self.ca_file,
            "KUBEFLOW_TRAINER_SERVER_TOKEN": self.token_file,
        }

    def token(self) -> str:
        with open(self.token_file, encoding="utf-8") as f:
            return f.read().strip()

    def took(self, document: dict[str, Any]) -> None:
        with self._lock:
            self.posts.append(document)
        with open(os.path.join(self.folder, "status.json"), "w", encoding="utf-8") as f:
            json.dump(document, f)

    def summary(self) -> str:
        """The last status taken, and the posts refused, in a line."""
        with self._lock:
            posts, refused = list(self.posts), list(self.refused)
        if not posts:
            said = "no post came"
        else:
            status = posts[-1].get("trainerStatus") or {}
            said = f"{shown(status)} ({len(posts)} posts)"
        if refused:
            codes = ", ".join(sorted({f"{code} {why}" for code, why in refused})[:3])
            said += f"; {len(refused)} refused: {codes}"
        return f"TrainJob status (status.trainerStatus): {said}"

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def _handler(state: StatusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's spelling
            if self.path != state.path:
                return self._answer(404, "not found")
            if not secrets.compare_digest(
                self.headers.get("Authorization", ""), f"Bearer {state.token()}"
            ):
                return self._answer(403, "forbidden")
            length = int(self.headers.get("Content-Length") or 0)
            if length > MOST_BYTES:
                return self._answer(413, "payload too large")
            if state.refuse_with is not None:
                return self._answer(state.refuse_with, "refused")
            try:
                document = json.loads(self.rfile.read(length))
            except ValueError:
                return self._answer(422, "invalid payload")
            why = problem(document)
            if why is not None:
                return self._answer(422, why)
            state.took(document)
            self._answer(200, json.dumps(document))

        def do_GET(self) -> None:  # noqa: N802
            self._answer(404, "not found")

        def _answer(self, code: int, text: str) -> None:
            if code != 200:
                with state._lock:
                    state.refused.append((code, text))
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass  # the summary says what was refused

    return Handler


def _private(path: str, data: bytes) -> None:
    """Write `data` readable by its owner alone (a key, a token)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _certificates(folder: str) -> tuple[str, str, str]:
    """A CA, and a server certificate it signs for 127.0.0.1: (ca.crt, tls.crt, tls.key)."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        raise MissingExtraError("--platform trainjob", EXTRA, module="cryptography") from None

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def made(subject: str, public: Any) -> Any:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vtrain-local-ca")]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
        )

    ca = (
        made("vtrain-local-ca", ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    loopback = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    cert = (
        made("trainjob-status", key.public_key())
        .add_extension(x509.SubjectAlternativeName([loopback]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = tuple(os.path.join(folder, n) for n in ("ca.crt", "tls.crt", "tls.key"))
    pem = serialization.Encoding.PEM
    with open(files[0], "wb") as f:
        f.write(ca.public_bytes(pem))
    with open(files[1], "wb") as f:
        f.write(cert.public_bytes(pem))
    _private(
        files[2],
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )
    return files[0], files[1], files[2]
