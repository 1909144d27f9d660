"""What vtrain said through its logger, as a test checks it (in place of pytest.warns)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def warned(caplog: pytest.LogCaptureFixture, pattern: str = "") -> Iterator[list[str]]:
    """Assert that the block logs a warning of the `vtrain` logger (or a child) that
    `pattern` finds (re.search); yields the list of every such warning's message."""
    start = len(caplog.records)
    said: list[str] = []
    with caplog.at_level(logging.WARNING, logger="vtrain"):
        yield said
    said += [
        r.getMessage()
        for r in caplog.records[start:]
        if r.levelno == logging.WARNING and (r.name == "vtrain" or r.name.startswith("vtrain."))
    ]
    assert any(re.search(pattern, line) for line in said), said
