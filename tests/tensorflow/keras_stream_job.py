"""A Keras job on a vtrain stream that logs the ids each step really trains, for the resume tests.

`python keras_stream_job.py RESULTS RUN [EXIT_AFTER]`: trains one epoch of the
training split (JSON Lines records {"id": i}), 4 records per worker and step,
committing every 2 steps with the data position. The ids are logged from
inside the train step (a py_function), so they are what a step trained, not
what tf.data had read ahead. With EXIT_AFTER every worker exits (code 3) once
that step's commit is done: stopped mid-epoch.
"""

from __future__ import annotations

import json
import os
import sys

import vtrain


def main() -> None:
    results, run = sys.argv[1], sys.argv[2]
    exit_after = int(sys.argv[3]) if len(sys.argv) > 3 else None
    handle = vtrain.plugins.get("tensorflow").configure()
    import tensorflow as tf

    keras = handle.keras
    log = os.path.join(results, f"ids-{run}-rank-{handle.rank}.jsonl")

    def note(ids: tf.Tensor) -> tf.Tensor:
        with open(log, "a") as f:
            f.write(json.dumps([int(i) for i in ids.numpy()]) + "\n")
        return tf.constant(0)

    class Logged(keras.Model):  # type: ignore[misc]
        def train_step(self, data: dict[str, tf.Tensor]) -> object:
            ids = data["id"]
            tf.py_function(note, [ids], tf.int32)
            x = tf.reshape(tf.cast(ids, tf.float32) / 100.0, (-1, 1))
            return super().train_step((x, 2.0 * x))

    with handle.scope():
        inputs = keras.Input(shape=(1,))
        model = Logged(inputs, keras.layers.Dense(1)(inputs))
        model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")

    found = handle.resume(model)
    stream = handle.stream(resume=found)
    spec = {"id": tf.TensorSpec((), tf.int64)}
    batches = handle.batches(stream, batch_size=4, output_signature=spec)
    callbacks = [handle.model_checkpoint(save_freq=2, data=batches, blocking=True)]

    class Stop(keras.callbacks.Callback):  # type: ignore[misc]
        def on_train_batch_end(self, batch: int, logs: object = None) -> None:
            if exit_after is not None and batch + 1 == exit_after:
                print(f"stopping after step {batch + 1}", flush=True)
                os._exit(3)

    callbacks.append(Stop())
    model.fit(batches.dataset, epochs=1, initial_epoch=found.done, callbacks=callbacks, verbose=0)
    handle.close()


if __name__ == "__main__":
    main()
