"""What an engine is: one platform's rules, flags and functions, in one `Engine` value.

Each engine's folder (`vertex/`, `aiplatform/`, `kubeflow/`) exports one `ENGINE`;
`vtrain.submit.engines` lists them, and `vtrain submit`, `vtrain render`, the job
file reader and the rehearsal call only what an `Engine` holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vtrain.submit.delivery import Delivery, print_document
from vtrain.submit.document import JobDocument
from vtrain.submit.options import JobOptions
from vtrain.submit.problems import Rules
from vtrain.submit.rehearsal import Rehearsal

Render = Callable[[JobOptions], tuple[str, dict[str, Any]]]
Deliver = Callable[[JobDocument, JobOptions | None, Delivery], int]


def show_document(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Print the job: the whole document to --output, or with credentials hidden."""
    print_document(delivery, job.document)
    return 0


@dataclass(frozen=True)
class Flag:
    """One of an engine's own command-line flags, and where its value goes."""

    name: str
    """The flag, e.g. --reduction-servers."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """argparse's `add_argument` keywords; a "type" names one of the CLI's: integer, seconds."""
    option: str | None = None
    """The `JobOptions.from_options` keyword the value goes to; None: not one."""
    delivery: str | None = None
    """The `Delivery` field the value goes to; None: not one."""
    builds: bool = False
    """Whether it says how the job is built, and so is refused beside --job."""

    @property
    def dest(self) -> str:
        """The attribute argparse stores the value under."""
        return str(self.settings.get("dest") or self.name.lstrip("-").replace("-", "_"))


@dataclass(frozen=True)
class Engine:
    """One platform, as `vtrain submit`, `vtrain render` and the rehearsal use it."""

    name: str
    """The PLATFORM of `vtrain submit PLATFORM`: vertex, aiplatform, kubeflow."""
    about: str
    """What the engine renders, in words (the sub-command's help)."""
    rules: Rules
    """The engine's checks of a command line, and its defaults."""
    title: str
    """The heading of its flags in --help."""
    flags: tuple[Flag, ...]
    """Its own flags; every platform's command takes them, and its `rules.elsewhere` refuses
    them on another platform, by name."""
    render: Render
    """Build and check the job's document from checked options: (kind, document)."""
    recognizes: Callable[[Mapping[str, Any]], bool]
    """True for a job file of this platform (told from the document's shape)."""
    load: Callable[[dict[str, Any], str, str], JobDocument]
    """Check a job file's document: load(document, source, name for a document with none)."""
    shape: str
    """What `recognizes` looks for, in words."""
    rename: Callable[[dict[str, Any], str], dict[str, Any]]
    """A job file's document under the name --name gives."""
    rehearse: Callable[[JobDocument, list[str], str | None, str], Rehearsal]
    """The local rehearsal of a job document: rehearse(job, local command, trial, output dir)."""
    show: Deliver = show_document
    """Print the job (render, --dry-run, and a platform that sends nothing)."""
    send: Deliver | None = None
    """Send the job and say where it went; None: this platform is rendered only."""
    follows: bool = False
    """Whether --wait can follow a sent job to its end."""
    runtime: Callable[[str], dict[str, Any]] | None = None
    """The document a cluster admin applies once, by name (`--runtime NAME`: Kubeflow
    Trainer's ClusterTrainingRuntime); None: the platform has none."""
