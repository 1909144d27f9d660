"""SIGTERM under Lightning: every rank stops at the same batch, whichever rank got it.

Lightning 2.6's own SIGTERM handler broadcasts rank 0's flag from inside the
signal handler: a collective at whatever point the signal interrupted. The
other ranks meet it with another collective (DDP's gradient all-reduce, a
barrier) and the job hangs until SIGKILL; the fault matrix caught it under
load, rank 0 silent for 30 s after `Received SIGTERM`. A worker's SIGTERM is
not broadcast at all: that worker stops alone, and the others wait for it.

So once training starts `VtrainCheckpoint` replaces that handler with a flag
(vtrain's `PreemptionHandler`, whose deadline still exits 143 before SIGKILL
if the loop never gets there), and after every batch the ranks agree, in one
all-reduce, whether any of them got it. Only then is Lightning's
`received_sigterm` set, on every rank at once, and Lightning raises its
SIGTERMException at the end of the same batch everywhere.

A SIGTERM before training starts (Lightning's handler is installed just
before) still meets Lightning's own handler; a handler the script installed
itself is Lightning's to restore after `fit`, and is not called during it.
"""

from __future__ import annotations

from typing import Any

from vtrain.preemption import PreemptionHandler
from vtrain_pytorch.lightning.stream_loader import ranks_with


class AgreedSigterm:
    """The SIGTERM flag of one fit, set in Lightning only when the ranks agree."""

    def __init__(self) -> None:
        self._handler: PreemptionHandler | None = None

    def install(self) -> None:
        """Take SIGTERM over from Lightning (on_train_start, on every rank)."""
        self.uninstall()
        self._handler = PreemptionHandler().install()

    def agree(self, trainer: Any) -> None:
        """After a batch: did any rank get SIGTERM? Then Lightning stops every rank here.

        A collective: every rank calls it after every batch it trains.
        """
        if self._handler is None or trainer.received_sigterm:
            return
        if ranks_with(self._handler.requested):
            # The connector's flag is what Lightning's loops check after each batch and epoch
            # (Trainer.received_sigterm reads it); there is no public setter.
            trainer._signal_connector.received_sigterm = True

    def uninstall(self) -> None:
        """Give SIGTERM back, unless it came: then the deadline stays armed until the exit."""
        if self._handler is not None and not self._handler.requested:
            self._handler.uninstall()
        self._handler = None
