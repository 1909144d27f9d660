"""The code the findings tell a user to write, in one place: a test runs each as printed.

Every framework's handle speaks the same words (`vtrain.plugins.handle.Handle`),
so one snippet serves every framework; the form without a handle is for a script
that never configures a plugin, whose leader is then the chief.
"""

from __future__ import annotations

LEADER = "if handle.is_leader:"
LEADER_WITHOUT_HANDLE = "if vtrain.ClusterInfo.from_env().is_chief:"
REPORT = "handle.report(value, tag={tag!r})"
"""A template: `report` fills in the study's metric id."""
REPORT_WITHOUT_HANDLE = "vtrain.hypertune.report(value, tag={tag!r})"

SNIPPETS = (LEADER, LEADER_WITHOUT_HANDLE, REPORT, REPORT_WITHOUT_HANDLE)
"""Every snippet a finding prints (templates unfilled)."""


def leader() -> str:
    """How to write from the leader alone, with a handle and without."""
    return both(LEADER, LEADER_WITHOUT_HANDLE)


def report(tag: str) -> str:
    """How to report the metric `tag`, with a handle and without."""
    return both(REPORT.format(tag=tag), REPORT_WITHOUT_HANDLE.format(tag=tag))


def both(with_handle: str, without: str) -> str:
    """``vtrain: `A`, or without a handle: `B```."""
    return f"vtrain: `{with_handle}`, or without a handle: `{without}`"
