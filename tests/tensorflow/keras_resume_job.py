"""A restart-safe Keras job for the tests: resume, model_checkpoint, preemption_callback.

Deterministic: fixed data, no shuffling, op determinism, Adam (whose state must
come back on resume, or the weights drift). Each epoch is exactly one pass over
the data, so a run resumed at an epoch's start sees the batches an
uninterrupted run sees. `--die-at`, `--term-at` and `--hold-at EPOCH:BATCH`
act on the first run only (when nothing was resumed): SIGKILL itself, SIGTERM
itself, or stop there until killed from outside; `--hold-for-term` stops
`--hold-role` there until a SIGTERM comes from outside.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time

import vtrain


def place(text: str) -> tuple[int, int]:
    epoch, batch = text.split(":")
    return int(epoch), int(batch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps", type=int, default=8, help="batches per epoch")
    parser.add_argument("--batch-size", type=int, default=16, help="global batch size")
    parser.add_argument("--save-freq", default="epoch")
    parser.add_argument("--weights-only", action="store_true")
    parser.add_argument("--plain", help="also run a plain ModelCheckpoint with this file path")
    parser.add_argument("--die-at", type=place)
    parser.add_argument("--term-at", type=place)
    parser.add_argument("--hold-at", type=place)
    parser.add_argument("--hold-for-term", type=place, help="wait there until SIGTERM comes")
    parser.add_argument("--hold-role", default="chief", help="the role that holds")
    args = parser.parse_args()

    handle = vtrain.plugins.get("tensorflow").configure()
    import numpy as np
    import tensorflow as tf

    keras = handle.keras
    keras.utils.set_random_seed(7)
    tf.config.experimental.enable_op_determinism()
    rng = np.random.default_rng(3)
    samples = args.steps * args.batch_size
    x = rng.normal(size=(samples, 8)).astype("float32")
    y = (x @ np.linspace(-1, 1, 8) + 0.1 * rng.normal(size=samples)).astype("float32")
    data = tf.data.Dataset.from_tensor_slices((x, y.reshape(-1, 1))).repeat().batch(args.batch_size)

    with handle.scope():
        layers = [keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)]
        model = keras.Sequential([keras.Input(shape=(8,)), *layers])
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")

    def weights() -> str:
        return json.dumps(np.concatenate([w.reshape(-1) for w in model.get_weights()]).tolist())

    initial_epoch = handle.resume(model, filepath=args.plain).done
    print(f"initial epoch {initial_epoch}")  # every replica's; the leader logs the resume too
    print(f"replicas {handle.num_replicas_in_sync}")
    print(f"start weights {weights()}", flush=True)
    epoch_now = [0]

    def trigger(batch: int) -> None:
        where = (epoch_now[0], batch + 1)
        if initial_epoch:
            return
        if where == args.hold_for_term and handle.role == args.hold_role:
            # The peers wait in the next all-reduce; the preemption callback, next in line,
            # then sees the signal at this batch's end.
            print(f"holding for SIGTERM at {where}", flush=True)
            while not preemption.handler.requested:
                time.sleep(0.05)
        if handle.role != "chief":
            return
        if where == args.die_at:
            # Epoch ends commit in the background: on a busy machine the last one may still
            # be landing here, and the kill would then resume an epoch earlier. The test
            # names the epoch to resume at: let the commits before the crash land first.
            checkpoint.manager.wait()
            print(f"dying at {where}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        if where == args.term_at:
            print(f"terminated at {where} with weights {weights()}", flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
        if where == args.hold_at:
            print(f"holding at {where}", flush=True)
            while True:
                time.sleep(1)

    save_freq = args.save_freq if args.save_freq == "epoch" else int(args.save_freq)
    checkpoint = handle.model_checkpoint(
        monitor="loss", verbose=1, save_freq=save_freq, save_weights_only=args.weights_only
    )
    preemption = handle.preemption_callback(grace=60)
    callbacks = [
        keras.callbacks.LambdaCallback(
            on_epoch_begin=lambda epoch, logs: epoch_now.__setitem__(0, epoch),
            on_train_batch_end=lambda batch, logs: trigger(batch),
            on_epoch_end=lambda epoch, logs: print(f"epoch {epoch + 1} weights {weights()}"),
        ),
        preemption,
        checkpoint,
    ]
    if args.plain:
        callbacks.append(keras.callbacks.ModelCheckpoint(args.plain))
    model.fit(
        data,
        epochs=args.epochs,
        steps_per_epoch=args.steps,
        initial_epoch=initial_epoch,
        callbacks=callbacks,
        verbose=2,
        shuffle=False,
    )
    print(f"final weights {weights()}", flush=True)
    print(f"final iterations {int(model.optimizer.iterations.numpy())}", flush=True)
    # The job ends when the chief does (the platform's rule) and a worker still at work is
    # then stopped: the chief leaves only once every worker has printed its end.
    handle.barrier()


if __name__ == "__main__":
    main()
