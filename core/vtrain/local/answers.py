"""Waiting for a server the rehearsal started to answer its health check, within a bound."""

from __future__ import annotations

import contextlib
import time
import urllib.error
import urllib.request
from collections.abc import Callable

from vtrain.errors import LaunchError


def wait_for_answer(
    url: str, timeout: float, what: str, *, gone: Callable[[], LaunchError | None] | None = None
) -> None:
    """Return once GET `url` answers 200; a LaunchError naming `what` after `timeout` seconds,
    or at once the error `gone` gives (a server process that exited)."""
    # Not through a proxy that http_proxy may name: the server is on this machine.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + timeout
    while True:
        ended = gone() if gone is not None else None
        if ended is not None:
            raise ended
        with (
            contextlib.suppress(urllib.error.URLError, OSError),
            opener.open(url, timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        if time.monotonic() > deadline:
            raise LaunchError(
                f"{what} did not answer within {timeout:.0f} s",
                value=url,
                expected="its health check to answer 200",
            )
        time.sleep(0.05)
