"""Fixtures of this framework's tests: a watchdog a test starts in the pytest process stops
with the test (tests/watchdogs.py)."""

from watchdogs import _stop_the_watchdog_a_test_started  # noqa: F401  (an autouse fixture)
