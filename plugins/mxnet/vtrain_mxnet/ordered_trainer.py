"""`OrderedTrainer`: a gluon.Trainer whose first parameter broadcast ends before the first pushpull.

MXNet 1.9's Trainer broadcasts the parameters lazily, inside the first step():
`_init_params` runs `kvstore.broadcast` (rank 0 inits, every worker pulls), and
the gradients' pushpull on the same keys follows at once. On CPU, KVStoreDist
points its per-key buffer at the gradient for that pushpull ("avoid memory
copy"), so the pull and the pushpull share no engine variable, and the
threaded engine may send the pull last: the server then answers it with the
summed gradient, which becomes that worker's parameter, and the workers drift
apart (seen in about 1 run in 6 with 2 workers and 2 servers). Waiting for the
broadcast restores the order the kvstore relies on; it costs one wait per
parameter, once. `_init_params` is the hook `step()` calls for that broadcast (see
vtrain_mxnet.internals). Its `step()` also counts the steps to the workers' next
agreement on whether one of them got SIGTERM (vtrain_mxnet.preemption). Importing
this module imports MXNet.
"""

from __future__ import annotations

from typing import Any

from mxnet import gluon

from vtrain_mxnet.internals import to_broadcast, trainer_kvstore
from vtrain_mxnet.preemption import AgreedSigterm


class OrderedTrainer(gluon.Trainer):  # type: ignore[misc]
    """gluon.Trainer that waits for each parameter's broadcast before its gradients move.

    With `sigterm`, every `step()` ends with `sigterm.agree`: now and then, the workers'
    agreement on a SIGTERM.
    """

    def __init__(self, *args: Any, sigterm: AgreedSigterm | None = None, **options: Any) -> None:
        super().__init__(*args, **options)
        self._sigterm = sigterm

    def step(self, *args: Any, **options: Any) -> None:
        super().step(*args, **options)
        if self._sigterm is not None:
            self._sigterm.agree(self)

    def _init_params(self) -> None:
        pending = to_broadcast(self)
        super()._init_params()
        kvstore = trainer_kvstore(self)
        if kvstore is not None and "dist" in kvstore.type:
            for param in pending:
                for data in param.list_data():
                    data.wait_to_read()
