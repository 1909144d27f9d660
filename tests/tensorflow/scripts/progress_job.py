"""Fit 2 epochs of 5 steps on `handle.batches` with `handle.callbacks()` and a validation of
3 batches, committing every 5 steps, and print the progress the watchdog saw
(tests/progressed.py). The split holds 40 records: 5 batches of 8 an epoch.

Every 5 steps, not each epoch: Keras does not know the length of the stream's epoch, and
an epoch-level checkpoint then numbers its commits by epochs (1, 2), not by steps.
"""

from progressed import said

import vtrain

handle = vtrain.plugins.get("tensorflow").configure()
import tensorflow as tf  # noqa: E402  (after configure, which chooses the Keras)

keras = handle.keras
with handle.scope():
    model = keras.Sequential([keras.Input(shape=(1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
signature = {"x": tf.TensorSpec((), tf.float32), "y": tf.TensorSpec((), tf.float32)}
batches = handle.batches(handle.stream("training"), batch_size=8, output_signature=signature)
pairs = batches.dataset.map(lambda r: (tf.reshape(r["x"], (-1, 1)), r["y"]))
valid = tf.data.Dataset.from_tensor_slices(([[1.0]] * 24, [2.0] * 24)).batch(8)
callbacks = handle.callbacks(backup=False, tensorboard=False)
callbacks.append(handle.model_checkpoint(monitor="loss", save_freq=5, data=batches))
model.fit(pairs, epochs=2, validation_data=valid, callbacks=callbacks, verbose=0)
said()
handle.close()
