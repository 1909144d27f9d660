"""`handle.batches()`: a tf.data.Dataset over a `vtrain.data.Stream`, and where it stood.

`fit` reads ahead of what it trains: tf.data prefetches, and the strategy's
input pipeline prefetches again. So when a step ends, `stream.state()` is
already some batches further than the records that step trained, and a save
taking it would skip those batches on resume. The generator here takes the
stream's position after each batch's last record, keyed by the step that
trains it, and the checkpoint callback asks for the step it has just seen
end (`position(batch)`).

Under MultiWorkerMirroredStrategy each worker's pipeline gives batches of the
global batch size, which the strategy cuts into one piece per worker
(`tf.distribute` rebatching): every step a worker trains `batch_size` records
of its own stream, so step b ends after record (b + 1) * batch_size.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from vtrain.errors import UsageError
from vtrain.progress import tracker

KEEP = 1024
"""Positions kept ahead of the last one asked for: far more than any prefetch buffer."""


class StreamBatches:
    """A stream read by tf.data in batches of `batch_size` per worker; `position(b)` after step b.

    `dataset` is the tf.data.Dataset to hand to `fit` (batched by the global
    batch, auto-sharding OFF); each iteration of it (each epoch `fit` runs)
    reads one epoch of the stream: what is left of the current one first, then
    `next_epoch()` each time after.
    """

    def __init__(
        self, stream: Any, *, batch_size: int, workers: int, output_signature: Any = None
    ) -> None:
        import tensorflow as tf

        from vtrain_tensorflow.data import _spec

        if not callable(getattr(stream, "state", None)) or not hasattr(stream, "next_epoch"):
            raise UsageError(
                "not a Stream",
                source="stream",
                value=stream,
                expected="what handle.stream(...) returns",
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise UsageError(
                "not a batch size",
                source="batch_size",
                value=batch_size,
                expected="the records each worker trains per step: an int >= 1",
            )
        self.stream = stream
        self.batch_size = batch_size
        self._positions: dict[int, dict[str, Any] | None] = {}
        self._end: dict[str, Any] | None = None
        self._ended = False
        self._started = False
        self._first: list[Any] = []
        if output_signature is None:
            first = next(stream, None)
            if first is None:
                raise UsageError(
                    "cannot infer the records' types: this worker's stream has no record",
                    source="output_signature",
                    value=None,
                    expected="a tf.TensorSpec, or a dict of them, for each record",
                    hint="pass output_signature= (a worker may be dealt nothing)",
                )
            self._first = [first]  # given first: the stream's position already counts it
            output_signature = _spec(first, "the first record")
        dataset = tf.data.Dataset.from_generator(self._records, output_signature=output_signature)
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        self.dataset = dataset.batch(batch_size * workers).with_options(options)

    def _records(self) -> Iterator[Any]:
        """One epoch of the stream's records, noting its position at every batch's end."""
        if self._started:
            self.stream.next_epoch()
        self._started = True
        self._positions, self._end, self._ended = {}, None, False
        pending, self._first = self._first, []
        progress = tracker()
        for taken, record in enumerate(itertools.chain(pending, self.stream), start=1):
            if taken % self.batch_size == 0:
                # Taken before the record goes out: tf.data asks for no more than a batch
                # holds, so code after the yield could run only when the next batch is read.
                step = taken // self.batch_size - 1
                self._positions[step] = self.stream.state()
                self._positions.pop(step - KEEP, None)
                # tf.data runs this ahead of training, on a thread of its own: a batch made
                # here is no step. Until the loop marks steps (the Keras progress callback,
                # handle.step()) it is the loop's only sign of life; after, a mark from this
                # thread would cut short the step times the watchdog's bound is taken from.
                if not progress.marks:
                    progress.alive()
            yield record
        self._end, self._ended = self.stream.state(), True

    def position(self, batch: int | None = None) -> dict[str, Any] | None:
        """This worker's position once step `batch` of the epoch was trained (None: its end).

        A step past this worker's last record (a worker dealt fewer records
        trains empty steps with the others) ends where its records end.
        """
        if batch is None or batch not in self._positions:
            last = max(self._positions, default=-1)
            if self._ended and (batch is None or batch > last):
                return self._end
            raise UsageError(
                "no position was taken for this step",
                source="position(batch)",
                value=batch,
                expected=f"a step this epoch has trained (0 to {last})",
                hint="pass the StreamBatches whose dataset fit trains on",
            )
        for older in [b for b in self._positions if b < batch]:
            del self._positions[older]  # trained and saved: never asked for again
        return self._positions[batch]

    def state(self) -> dict[str, Any] | None:
        """The stream's position now, ahead of training by what tf.data prefetched."""
        state: dict[str, Any] | None = self.stream.state()
        return state
