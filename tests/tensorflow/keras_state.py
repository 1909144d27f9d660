"""A tiny Keras model for the checkpoint tests, and its whole state (weights, optimizer)."""

from __future__ import annotations

from typing import Any

import numpy as np

X = np.random.default_rng(0).normal(size=(32, 4)).astype("float32")
Y = (X @ np.array([1.0, -2.0, 0.5, 3.0], dtype="float32")).reshape(-1, 1)


def tiny(keras: Any) -> Any:
    """A compiled two-layer model with Adam, whose moments must survive a resume."""
    layers = [keras.layers.Dense(3), keras.layers.Dense(1)]
    model = keras.Sequential([keras.Input(shape=(4,)), *layers])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def state(model: Any) -> list[np.ndarray]:
    """The weights, then the optimizer's variables (step count and moments)."""
    optimizer = model.optimizer.variables
    optimizer = optimizer() if callable(optimizer) else optimizer  # tf-keras: a method
    return [np.array(w) for w in model.get_weights()] + [v.numpy() for v in optimizer]


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    """True when two states hold the same arrays, bit for bit."""
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def recorder(keras: Any, states: dict[int, list[np.ndarray]]) -> Any:
    """A callback that keeps the model's state after every epoch, by epoch number from 1."""

    class Recorder(keras.callbacks.Callback):  # type: ignore[misc]
        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            states[epoch + 1] = state(self.model)

    return Recorder()


def scripted(keras: Any, monitor: str, values: list[float]) -> Any:
    """A callback that puts `values[epoch]` into the epoch's logs as `monitor`."""

    class Scripted(keras.callbacks.Callback):  # type: ignore[misc]
        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            assert logs is not None
            logs[monitor] = values[epoch]

    return Scripted()
