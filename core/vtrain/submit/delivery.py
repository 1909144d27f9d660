"""How a job leaves `vtrain submit`: printed (how, and where), or sent (where, and followed or not).

Nothing printed carries a credential: a printed document goes through
`vtrain.redact`; only a file the user names with `--output` holds the whole
document, and that file is this user's only (mode 0600). What is printed goes to
the delivery's `terminal`: the command line passes `vtrain.cli.output`, the one
module that prints.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from vtrain.redact import HIDDEN, redact


class Terminal(Protocol):
    """Where a command's results and notes go (`vtrain.cli.output`, which alone prints)."""

    def say(self, text: str = "", *, end: str = "\n") -> None:
        """A result of the command, on stdout."""

    def complain(self, text: str) -> None:
        """A line for the person at the terminal, on stderr."""


@dataclass(frozen=True)
class Delivery:
    """What the command line says about printing or sending the job, whatever its platform."""

    terminal: Terminal = field(kw_only=True)
    """Where the job, its name and the notes about it are printed."""

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
        write_document(delivery.output, dump(document, delivery.format))
        delivery.terminal.complain(f"vtrain: wrote {delivery.output}")
        return
    shown = redact(document)
    delivery.terminal.say(dump(shown, delivery.format), end="")
    if shown != document:
        warn_hidden(delivery.terminal)


def write_document(path: str, text: str) -> None:
    """Write --output: a file this user alone can read, as it holds the credentials too."""
    from vtrain.errors import StorageError
    from vtrain.storage.atomic import write_atomic

    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A pipe or a terminal (-o /dev/stdout): nothing stays on disk, and it has no mode
        # of ours to set.
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise StorageError(f"cannot write it: {e.strerror or e}", source=path) from e
        return
    # The user's own link to a file is followed: it is the path they gave.
    write_atomic(os.path.realpath(path), text.encode(), private=True)


def warn_hidden(terminal: Terminal) -> None:
    """Say on stderr that printed values were hidden, when stdout goes to a file or a pipe."""
    # On a terminal the *** is plain to see; `> job.yaml` would keep it without a word, and
    # `vtrain submit --job job.yaml` refuses such a file.
    if not sys.stdout.isatty():
        terminal.complain(
            f"vtrain: note: credentials are printed as {HIDDEN}; "
            "-o FILE writes the real values (a printed copy cannot be sent)"
        )
