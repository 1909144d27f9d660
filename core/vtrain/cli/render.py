"""`vtrain render {vertex|aiplatform|kubeflow}`: `vtrain submit --dry-run` under its own name."""

from __future__ import annotations

from typing import Any


def add_parser(subparsers: Any) -> None:
    """Register `vtrain render`: the flags of `vtrain submit`; it prints and never sends."""
    from vtrain.cli.submit import register

    register(subparsers, "render", dry_run=True)
