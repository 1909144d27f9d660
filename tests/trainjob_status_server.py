"""A stand-in for Kubeflow Trainer's status server (KEP-2779), with real TLS, on loopback.

It checks each post as the Trainer's `pkg/statusserver` does: `POST
/apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status` only
(else 404), `Authorization: Bearer TOKEN` exactly (else 403), a body of at most 64
KiB (else 413) that decodes as an `UpdateTrainJobStatusRequest` (else 422): a
`trainerStatus` whose `progressPercentage` is an int of 0 to 100,
`estimatedRemainingSeconds` an int of at least 0, `metrics` at most 256 of
{"name", "value"}, each a string of 1 to 64 characters, and `lastUpdatedTime` set
(RFC 3339). Its CA and its certificate (for 127.0.0.1) are made per server.
"""

from __future__ import annotations

import datetime
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"
MOST_BYTES = 1 << 16


@dataclass
class StatusServer:
    """What the server took, and how to reach it."""

    url: str
    ca_file: Path
    token_file: Path
    posts: list[dict[str, Any]] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    refuse_with: int | None = None
    """Answer every post with this status (a server that refuses)."""


def problem(document: object) -> str | None:
    """Why the Trainer would refuse `document` (422), or None."""
    if not isinstance(document, dict) or set(document) - {"trainerStatus"}:
        return "not an UpdateTrainJobStatusRequest"
    status = document.get("trainerStatus")
    if status is None:
        return None
    if not isinstance(status, dict):
        return "trainerStatus is not an object"
    for key, low, high in (
        ("progressPercentage", 0, 100),
        ("estimatedRemainingSeconds", 0, 2**31 - 1),
    ):
        value = status.get(key)
        if value is not None and (type(value) is not int or not low <= value <= high):
            return f"{key}: {value!r} is not an int of {low} to {high}"
    metrics = status.get("metrics", [])
    if not isinstance(metrics, list) or len(metrics) > 256:
        return "metrics: at most 256"
    for m in metrics:
        if not isinstance(m, dict) or set(m) != {"name", "value"}:
            return f"metrics: {m!r} is not a name and a value"
        for key in ("name", "value"):
            if not isinstance(m[key], str) or not 1 <= len(m[key]) <= 64:
                return f"metrics: {key} {m[key]!r} is not a string of 1 to 64 characters"
    when = status.get("lastUpdatedTime")
    if not isinstance(when, str):
        return "lastUpdatedTime: required"
    try:
        datetime.datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return f"lastUpdatedTime: {when!r} is not RFC 3339"
    return None


def start(
    folder: Path, namespace: str = "team", name: str = "job-1"
) -> tuple[StatusServer, ThreadingHTTPServer]:
    """Serve on a free 127.0.0.1 port until the caller shuts the server down."""
    ca_file, cert_file, key_file = _certificates(folder)
    token_file = folder / "token"
    token_file.write_text("eyJ-a-projected-token.part-two\n")
    expected = PATH.format(ns=namespace, name=name)
    server_state: list[StatusServer] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's spelling)
            state = server_state[0]
            if self.path != expected:
                return self._answer(404, "Not found")
            if self.headers.get("Authorization") != f"Bearer {token_file.read_text().strip()}":
                return self._answer(403, "Forbidden")
            length = int(self.headers.get("Content-Length") or 0)
            if length > MOST_BYTES:
                return self._answer(413, "Payload too large")
            if state.refuse_with is not None:
                return self._answer(state.refuse_with, "refused by the test")
            try:
                document = json.loads(self.rfile.read(length))
            except ValueError:
                return self._answer(422, "Invalid payload")
            why = problem(document)
            if why is not None:
                return self._answer(422, why)
            state.posts.append(document)
            self._answer(200, json.dumps(document))

        def do_GET(self) -> None:  # noqa: N802
            self._answer(404, "Not found")

        def _answer(self, code: int, text: str) -> None:
            if code != 200:
                server_state[0].refused.append((code, text))
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    server_state.append(StatusServer(f"https://127.0.0.1:{port}{expected}", ca_file, token_file))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server_state[0], server


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate it signs for 127.0.0.1: (ca.crt, tls.crt, tls.key)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def made(subject: str, public: Any, **extensions: Any) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(name("trainer-ca"))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )

    ca = (
        made("trainer-ca", ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        made("status-server", key.public_key())
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = folder / "ca.crt", folder / "tls.crt", folder / "tls.key"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files
