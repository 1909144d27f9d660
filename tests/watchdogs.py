"""Test isolation for the watchdog: a trainer's watchdog is process-wide, and a test that
configures a handle in the pytest process without closing it would leave one running.

In a job the process is the trainer, and the watchdog ends it when it stops making
progress; here the process is pytest, which goes on to other tests. Each framework's
conftest imports this fixture, which stops whatever watchdog a test started. Jobs the
tests run as processes (`vtrain local run`) keep their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _stop_the_watchdog_a_test_started() -> Iterator[None]:
    yield
    from vtrain.progress.watchdog import unwatch

    unwatch()
