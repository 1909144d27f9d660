"""`vtrain report [FOLDER]`: a job's or a study's folder as one self-contained HTML page."""

from __future__ import annotations

import argparse
from typing import Any

from vtrain.cli.output import say


def add_parser(subparsers: Any) -> None:
    """Register `vtrain report`."""
    p = subparsers.add_parser(
        "report",
        help="draw a job's or a study's folder as one HTML page",
        description="Write one HTML file (no network, everything inline) that shows what a job "
        "did: a timeline lane per replica and attempt with its commits, kills, preemptions, "
        "restarts and resumes; goodput and where the rest of the time went; each tracked and "
        "tuning metric over steps; the verdict; a failed job's last log lines. For a study "
        "(a folder with study.json): each trial's metric against its parameters, and the "
        "trials over time.",
    )
    p.add_argument(
        "folder",
        nargs="?",
        default=".",
        metavar="FOLDER",
        help="the job's output folder (a local run's --output-dir, a Vertex job's base output "
        "directory: a path, /gcs/... or gs://...), or a study's (default: here)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE.html",
        help="where to write it (default: FOLDER/report.html, or report-NAME.html here for gs://)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the report; print its path."""
    from vtrain.report import write_report

    say(write_report(args.folder, args.output))
    return 0
