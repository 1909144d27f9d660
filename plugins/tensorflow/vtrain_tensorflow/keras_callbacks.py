"""Keras callbacks made for the Keras in use (tf-keras or Keras 3), built on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Report = Callable[..., bool]
"""`handle.report`: writes the tuning metric from the leader, with the handle's environment."""


def hypertune_callback(keras: Any, report: Report, monitor: str, tag: str | None = None) -> Any:
    """A callback that reports `logs[monitor]` through `report` after every epoch."""

    class HypertuneCallback(keras.callbacks.Callback):  # type: ignore[misc]
        """Reports the tuning metric each epoch (the leader writes; other replicas skip)."""

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            value = (logs or {}).get(monitor)
            if value is not None:
                report(float(value), tag, step=epoch + 1)

    return HypertuneCallback()
