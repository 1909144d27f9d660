"""The TrainJob status server the tests and bench/ post to: the rehearsal's own, from
`vtrain.local.trainjob_status` (real TLS, a CA and a certificate per server, the token
and the schema checked as Kubeflow Trainer's `pkg/statusserver` checks them)."""

from __future__ import annotations

from http.server import ThreadingHTTPServer
from pathlib import Path

from vtrain.local.trainjob_status import StatusServer
from vtrain.trainjob.status_checks import problem

__all__ = ["StatusServer", "problem", "start"]


def start(folder: Path, name: str = "job-1") -> tuple[StatusServer, ThreadingHTTPServer]:
    """Serve on a free 127.0.0.1 port until the caller shuts the server down."""
    state = StatusServer.start(str(folder), name)
    return state, state.http
