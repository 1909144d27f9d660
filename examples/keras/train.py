"""Train a small Keras regression model on synthetic data, alone or on a cluster.

Runs alone (`python train.py`), on a local cluster
(`vtrain local run --workers 1 -- python train.py`, or with `--ps 1` for
parameter-server training), and unchanged on Vertex AI, AI Platform or Kubeflow.
`configure()` comes first: it writes TF_CONFIG and picks the Keras that works
for the cluster before TensorFlow builds anything. `resume`, `model_checkpoint`
and `preemption_callback` make it restart-safe: killed or preempted, it goes on
from its last committed checkpoint when the platform starts it again.
"""

from __future__ import annotations

import argparse
import json
import time

import vtrain

# Before the framework's import: a missing framework or a vtrain error then ends the script
# with one line that says what to do (`pip install "vtrain[tensorflow]"`), not a traceback.
vtrain.one_line_errors()

FEATURES = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32, help="global batch size")
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--learning-rate", "--learning_rate", type=float, default=0.05)
    parser.add_argument("--epoch-delay", type=float, default=0.0, help="seconds to sleep per epoch")
    parser.add_argument("--job-dir", help="AI Platform's jobDir; outputs go to vtrain's folders")
    args = parser.parse_args()

    handle = vtrain.plugins.get("tensorflow").configure()
    handle.track.autolog().params(vars(args))  # the job's one run, reopened after a restart
    import numpy as np
    import tensorflow as tf

    keras = handle.keras
    rng = np.random.default_rng(1234)
    x = rng.normal(size=(args.samples, FEATURES)).astype("float32")
    y = x @ (np.arange(1, FEATURES + 1) / FEATURES) + 0.1 * rng.normal(size=args.samples)
    y = y.astype("float32").reshape(-1, 1)

    def build() -> tf.keras.Model:
        model = keras.Sequential([keras.Input(shape=(FEATURES,)), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(args.learning_rate), loss="mse")
        return model

    if handle.role == "evaluator":
        model = build()
        data = tf.data.Dataset.from_tensor_slices((x, y)).batch(args.batch_size)
        handle.evaluate_checkpoints(model, data, max_evaluations=args.epochs)
        return

    with handle.scope():
        model = build()
    # After a restart (a VM that went away, a preemption) this loads the newest checkpoint;
    # `done` is the epochs it had completed, where fit goes on from (0 on the first run).
    initial_epoch = handle.resume(model).done
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(args.batch_size)
    callbacks = handle.callbacks(monitor="loss", backup=False)  # resume replaces BackupAndRestore
    callbacks += [
        handle.model_checkpoint(monitor="loss", save_best_only=True, keep=3),
        handle.preemption_callback(),
    ]
    if args.epoch_delay:
        callbacks.append(
            keras.callbacks.LambdaCallback(
                on_epoch_end=lambda epoch, logs: time.sleep(args.epoch_delay)
            )
        )
    # shuffle=False: a tf.data dataset keeps its own order (Keras warns that it ignores True).
    model.fit(
        dataset,
        epochs=args.epochs,
        steps_per_epoch=args.samples // args.batch_size,
        initial_epoch=initial_epoch,
        callbacks=callbacks,
        shuffle=False,
        verbose=2,
    )

    best = handle.best(model)  # the best epoch's weights (and optimizer state) become the model
    if best is not None:
        print(f"best epoch {best.epoch + 1}: loss {best.value:.5f}", flush=True)
    weights = np.concatenate([w.reshape(-1) for w in model.get_weights()]).tolist()
    print("final weights " + json.dumps(weights), flush=True)
    saved = handle.save_model(model)
    if saved:
        print(f"model saved to {saved}", flush=True)
    vtrain.print_outputs()  # run alone: where the model, checkpoints, logs and metric are


if __name__ == "__main__":
    main()
