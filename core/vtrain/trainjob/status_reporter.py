"""The leader's posts of progress and metrics to the TrainJob's status (Kubeflow Trainer, KEP-2779).

Where the Trainer names a status endpoint (`status_payload.URL_VARIABLES`), the
leader starts a thread that, every EVERY seconds, reads this process's progress
tracker (the step, the total where the loop said it, the rate, the metrics it
reported) and posts it over HTTPS, the server checked against the Trainer's CA,
with the projected token (read again at each post: it rotates). A post never
blocks a step: the loop only marks the tracker. A server that is down, slow or
refuses gets one line in the log (with its answer, never the token), then backoff
to LONGEST; one line again when posts go through. `stop` makes the last post (100%
when the job ended well), waiting at most a few seconds.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

from vtrain.log import logger
from vtrain.progress import tracker
from vtrain.trainjob.status_payload import (
    CA_VARIABLES,
    TOKEN_VARIABLES,
    URL_VARIABLES,
    body,
    given,
)

EVERY = 5.0
"""Seconds between two posts (the Kubeflow SDK's and Hugging Face's throttle)."""
LONGEST = 120.0
"""The longest pause after failed posts."""
TIMEOUT = 5.0
"""Seconds one post may take."""

log = logger(__name__)
_running: StatusReporter | None = None


class StatusReporter:
    """The thread that posts this process's progress to one status endpoint."""

    def __init__(self, url: str, ca_file: str | None, token_file: str | None, every: float = EVERY):
        self.url = url
        self._token_file = token_file
        self._ca_file = ca_file
        self._context: ssl.SSLContext | None = None  # made by the thread: a bad CA is said there
        self._every = every
        self._stop = threading.Event()
        self._failing: str | None = None
        self.posted = 0
        self.pid = os.getpid()
        self._thread = threading.Thread(
            target=self._run, name="vtrain-trainjob-status", daemon=True
        )

    def start(self) -> None:
        """Begin posting (a daemon thread: it never holds the process up)."""
        self._thread.start()

    def _run(self) -> None:
        pause = self._every
        while not self._stop.wait(pause):
            pause = self._every if self.post() else min(LONGEST, max(2 * pause, 2 * self._every))

    def post(self, *, done: bool = False) -> bool:
        """Post the progress now; False (said once) when it did not go through."""
        progress = tracker()
        data, left = body(
            progress.step,
            progress.total,
            progress.rate(),
            dict(progress.metrics),
            time.time(),
            done=done,
        )
        try:
            self._send(json.dumps(data).encode())
        except Exception as e:  # the server's or the network's, whatever their class
            self._said(e)
            return False
        if self._failing is not None:
            log.info("vtrain: the TrainJob's status takes posts again")
            self._failing = None
        if left and not self.posted:
            log.warning(
                "vtrain: metrics left out of the TrainJob's status (names of 1 to 64 "
                f"characters, 256 metrics at most): {', '.join(sorted(left)[:5])}"
            )
        self.posted += 1
        return True

    def _send(self, data: bytes) -> None:
        headers = {"Content-Type": "application/json"}
        if self._token_file:
            with open(self._token_file, encoding="utf-8") as f:
                headers["Authorization"] = f"Bearer {f.read().strip()}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        if self._context is None and self._ca_file:
            self._context = ssl.create_default_context(cafile=self._ca_file)
        handlers = [urllib.request.HTTPSHandler(context=self._context)] if self._context else []
        with urllib.request.build_opener(*handlers).open(request, timeout=TIMEOUT) as answer:
            answer.read()

    def _said(self, e: Exception) -> None:
        from vtrain.redact import redact_text

        if isinstance(e, urllib.error.HTTPError):
            answer = e.read(300).decode(errors="replace")
            why = f"HTTP {e.code}: {answer.strip()}"
        else:
            why = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
        why = redact_text(why)
        if self._failing is None:
            log.warning(
                f"vtrain: cannot post to the TrainJob's status ({why}); retrying, with backoff"
            )
        self._failing = why

    def stop(self, *, done: bool) -> None:
        """The last post (`done`: the job ended well, 100%), then no more."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(TIMEOUT)
        self.post(done=done)


def start_reporting(environ: Mapping[str, str]) -> StatusReporter | None:
    """Start this process's reporter (once) where the Trainer names a status endpoint."""
    global _running
    url = given(environ, URL_VARIABLES)
    if url is None:
        return None
    if _running is not None and _running.pid == os.getpid():
        return _running
    _running = StatusReporter(url, given(environ, CA_VARIABLES), given(environ, TOKEN_VARIABLES))
    _running.start()
    import atexit

    atexit.register(_at_exit)
    return _running


def _at_exit() -> None:
    """The last post of a script that never closed its handle: done when its loop made every
    step it said it would (its saves are behind it, as the process is ending)."""
    progress = tracker()
    done = progress.total is not None and (progress.step or 0) >= progress.total
    stop_reporting(done=done)


def stop_reporting(*, done: bool) -> None:
    """The last post of this process's reporter, if it runs (`done`: the job ended well)."""
    global _running
    if _running is not None and _running.pid == os.getpid():
        _running.stop(done=done)
    _running = None
