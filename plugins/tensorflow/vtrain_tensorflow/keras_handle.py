"""What the Keras callbacks use of the TensorFlow handle, as a Protocol.

The handle offers the callbacks (`handle.model_checkpoint`, `handle.preemption_callback`),
so the modules that build them cannot import `vtrain_tensorflow.handle` back, not even
for its type: they name this instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vtrain.checkpoints import CheckpointManager
    from vtrain.cluster import ClusterInfo
    from vtrain.preemption import PreemptionHandler


class KerasHandle(Protocol):
    """The words of `TensorFlowHandle` that its Keras callbacks read."""

    @property
    def info(self) -> ClusterInfo: ...

    @property
    def strategy(self) -> Any: ...

    @property
    def keras(self) -> Any: ...

    @property
    def preempted(self) -> bool: ...

    def checkpoint_manager(
        self,
        directory: str | None = None,
        *,
        keep: int | None = None,
        keep_every: int | None = None,
    ) -> CheckpointManager: ...

    def barrier(self) -> None: ...

    def _place(self, what: str) -> tuple[int, int]: ...

    def _watch_sigterm(self, handler: PreemptionHandler) -> None: ...
