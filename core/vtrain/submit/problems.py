"""The problems of one command line, collected to be raised together, and each engine's `Rules`.

`JobOptions.from_options` runs the shared checks and then the chosen engine's
`Rules.check`; every other engine's `Rules.elsewhere` refuses the options only
that engine has. `Problems` is `vtrain.errors.Problems` with the checks several
engines share.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vtrain.errors import Problems as Collector
from vtrain.storage.location import BUCKET_RULE, bucket_problem
from vtrain.submit.request import JobRequest
from vtrain.submit.values import GOOGLE_LABELS, LabelRule
from vtrain.tune.study import Study


class Problems(Collector):
    """Every problem found in one command line for `platform`, each named by its flag."""

    def __init__(self, platform: str) -> None:
        super().__init__()
        self.platform = platform

    def refuse(self, flag: str, value: Any, why: str, expected: str | None = None) -> None:
        """Refuse a flag this platform cannot express; nothing when it was not given."""
        if value not in (None, False, 0, [], (), {}):
            self.bad(flag, why, value, expected or f"no {flag} with {self.platform}")

    def job_name(self, name: str, pattern: re.Pattern[str], says: str) -> None:
        """Refuse a job name the platform would refuse."""
        if not pattern.fullmatch(name):
            self.bad("--name", f"not a {self.platform} job name", name, says)

    def cloud_storage(self, output_dir: str | None) -> None:
        """Refuse an --output-dir that is not gs://: the service writes there itself."""
        if output_dir is None:
            return
        if not output_dir.startswith("gs://"):
            self.bad(
                "--output-dir",
                "not a Cloud Storage URI",
                output_dir,
                "gs://BUCKET/PATH",
                hint=f"{self.platform} writes the model and checkpoints to Cloud Storage",
            )
            return
        # The URI is one: say which rule its bucket breaks, not that it is not a URI.
        why = bucket_problem(output_dir[len("gs://") :].partition("/")[0])
        if why is not None:
            self.bad("--output-dir", f"the bucket name {why}", output_dir, BUCKET_RULE)

    def ps_need_workers(self, request: JobRequest) -> None:
        """Refuse parameter servers in a job without workers: nothing would use them."""
        if request.ps > 0 and request.workers <= 0:
            self.bad(
                "--ps",
                "parameter servers serve workers, and the job has none",
                request.ps,
                "--workers N (1 or more) beside --ps",
                hint="TensorFlow's ParameterServerStrategy stops with 'There must be at least "
                "one worker' when it starts",
            )


@dataclass(frozen=True)
class Rules:
    """One engine's checks of a command line, beside the shared ones."""

    check: Callable[[JobRequest, Study | None, Problems], None]
    """What this platform cannot run, given the request and its study (already read)."""
    elsewhere: Callable[[JobRequest, Problems], None]
    """Refuse, on another platform, the options that only this one has."""
    default_machine: str | None
    """The machine of a role without --machine-type; None: the cluster's nodes."""
    name_separator: str = "-"
    """Between the words of a job name made from the clock."""
    labels: LabelRule = GOOGLE_LABELS
    """The labels the engine takes (--label)."""
    restarts_jobs: bool = False
    """Whether the engine can restart the whole job when one replica restarts."""
