"""vtrain's own notes during a local job: records of the `vtrain.local` logger, at INFO.

A program that runs a job silences, raises or redirects them with the standard
`logging` configuration. Each record carries the job's `Output` (`vtrain_output`)
and the replica it is about (`vtrain_replica`, or None): `vtrain local run`'s
console handler hands it to `Output.note`, which shows it under vtrain's prefix
and also writes it to that replica's log. Without that handler a note is one
line on stderr, as every vtrain record is.

The job's header is held while the replicas start: `logging` and the redaction
patterns cost milliseconds that the replicas, all starting at once, would wait for.
"""

from __future__ import annotations

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging

    from vtrain.local.output import Output

LOGGER = __name__.rpartition(".")[0]
"""`vtrain.local`, the package's logger: its notes, and whatever else its modules say."""
OUTPUT = "vtrain_output"
"""The record's attribute that holds the job's Output."""
REPLICA = "vtrain_replica"
"""The record's attribute that names the replica a note is about (or None)."""


class Notes:
    """Writes vtrain's notes about one job, holding them while its replicas start."""

    def __init__(self, output: Output) -> None:
        self._output = output
        self._held: list[tuple[str, str | None]] | None = None
        self._log: logging.Logger | None = None

    @property
    def holding(self) -> bool:
        """True between `hold` and `release`."""
        return self._held is not None

    def hold(self) -> None:
        """Keep the notes from now until `release`: the replicas start first."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Write the notes held since `hold`, in order."""
        held, self._held = self._held, None
        for text, replica in held or ():
            self(text, replica)

    def __call__(self, text: str, replica: str | None = None) -> None:
        """Note `text`, about `replica` when one is named (its log gets it too)."""
        if self._held is not None:
            self._held.append((text, replica))
            return
        if self._log is None:
            from vtrain.log import logger

            self._log = logger(LOGGER)
        if self._log.isEnabledFor(20):  # logging.INFO; skip the redaction when nobody listens
            from vtrain.redact import redact_text

            extra = {OUTPUT: self._output, REPLICA: replica}
            self._log.info("%s", redact_text(text), extra=extra)
