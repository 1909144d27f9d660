"""Keras callbacks made for the Keras in use (tf-keras or Keras 3), built on first use."""

from __future__ import annotations

from typing import Any

import vtrain


def hypertune_callback(keras: Any, monitor: str, tag: str | None = None) -> Any:
    """A callback that reports `logs[monitor]` to the tuning service after every epoch."""

    class HypertuneCallback(keras.callbacks.Callback):  # type: ignore[misc]
        """Reports the tuning metric each epoch (the chief writes; other replicas skip)."""

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            value = (logs or {}).get(monitor)
            if value is not None:
                vtrain.hypertune.report(float(value), tag=tag, step=epoch + 1)

    return HypertuneCallback()
