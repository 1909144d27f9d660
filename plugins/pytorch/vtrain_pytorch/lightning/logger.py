"""`VtrainLogger`: Lightning's logged metrics and hyperparameters, into the job's one run.

`Trainer(logger=VtrainLogger(handle))` (or `trainer_options` once the handle's
`track.autolog()` is on) writes through `handle.track`: from the leader alone,
into the job's run, which a restarted or resumed job reopens (Lightning's own
loggers start a new run at every restart unless the script stores the run's id).
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment

from vtrain.plugins.handle import Handle


class VtrainLogger(Logger):  # type: ignore[misc]
    """A Lightning logger that writes to `handle.track` (the job's run)."""

    def __init__(self, handle: Handle) -> None:
        super().__init__()
        self._track = handle.track

    @property
    def name(self) -> str:
        """The run's name: the job's (or the trial's)."""
        return self._track.run

    @property
    def version(self) -> int:
        """The attempt of the run this process writes (0 until it writes)."""
        return self._track.attempt

    @property
    @rank_zero_experiment  # type: ignore[untyped-decorator]
    def experiment(self) -> Any:
        """The run itself (`vtrain.track.Track`)."""
        return self._track

    def log_hyperparams(
        self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any
    ) -> None:
        """The module's hyperparameters, as the run's params."""
        values = vars(params) if isinstance(params, Namespace) else dict(params)
        self._track.params(values)

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        """Metrics at Lightning's step, counted as vtrain counts steps (those trained)."""
        # Lightning gives the index of the last step (0 for the first); vtrain's runs, commits
        # and resumes count the steps trained (1 after the first), so one run's series and the
        # step it resumed from line up. Lightning adds the epoch to what it logs: kept too.
        self._track.metrics(metrics, step=None if step is None else step + 1)

    def finalize(self, status: str) -> None:
        """Nothing: the run's attempt ends with the handle (`handle.close`)."""
