"""How a job leaves `vtrain submit`: printed (how, and where), or sent (where, and followed or not).

Nothing printed carries a credential: a printed document goes through
`vtrain.redact`; only a file the user names with `--output` holds the whole
document.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from vtrain.redact import HIDDEN, redact


@dataclass(frozen=True)
class Delivery:
    """What the command line says about printing or sending the job, whatever its platform."""

    dry_run: bool = False
    """Print the job and send nothing (`vtrain render`, or --dry-run)."""
    format: str = "yaml"
    output: str | None = None
    """A file for the whole document, credentials too, instead of stdout."""
    flags_only: bool = False
    """AI Platform: the job as gcloud flags, without config.yaml."""
    job_name: str | None = None
    """--name beside --job: the job's name where the document has none (AI Platform)."""
    project: str | None = None
    region: str | None = None
    api_endpoint: str | None = None
    wait: bool = False
    """Follow the sent job until it ends."""
    poll: float = 30.0
    namespace: str | None = None
    kubeconfig: str | None = None
    context: str | None = None


def dump(document: Any, fmt: str) -> str:
    """`document` as YAML or JSON text."""
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    from vtrain.submit.sdk import yaml_module

    text: str = yaml_module().safe_dump(document, sort_keys=False, default_flow_style=False)
    return text


def print_document(delivery: Delivery, document: Any) -> None:
    """Write the whole document to --output, or print it with credentials hidden."""
    if delivery.output:
        with open(delivery.output, "w", encoding="utf-8") as f:
            f.write(dump(document, delivery.format))
        print(f"vtrain: wrote {delivery.output}", file=sys.stderr)
        return
    shown = redact(document)
    sys.stdout.write(dump(shown, delivery.format))
    if shown != document:
        warn_hidden()


def warn_hidden() -> None:
    """Say on stderr that printed values were hidden, when stdout goes to a file or a pipe."""
    # On a terminal the *** is plain to see; `> job.yaml` would keep it without a word, and
    # `vtrain submit --job job.yaml` refuses such a file.
    if not sys.stdout.isatty():
        print(
            f"vtrain: note: credentials are printed as {HIDDEN}; "
            "-o FILE writes the real values (a printed copy cannot be sent)",
            file=sys.stderr,
        )
