"""A small Gluon regression on synthetic data, alone or on an MXNet parameter-server cluster.

    python examples/mxnet/train.py
    vtrain local run --workers 2 --ps 1 -- python examples/mxnet/train.py
    vtrain local run --workers 2 -- python examples/mxnet/train.py --chief-trains \
        --servers-beside-workers

Every epoch is the same sequence of global batches whatever the number of
workers; each worker takes its part of each batch, so a cluster and one
process reach the same parameters. The leader checkpoints every epoch, and a
restarted job resumes from the last committed one. On SIGTERM (a preemption) of
any worker, every worker stops after the same step, that step is committed, and
every process exits 143: the restarted job redoes no step. Checkpoints count
steps done.
"""

from __future__ import annotations

import argparse
import json
import time

import vtrain

# Before the framework's import: a missing framework or a vtrain error then ends the script
# with one line that says what to do (`pip install "vtrain[mxnet]"`), not a traceback.
vtrain.one_line_errors()

import numpy as np

FEATURES = 8


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=8)
    parser.add_argument("--global-batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--kvstore", default="dist_sync")
    parser.add_argument("--chief-trains", action="store_true")
    parser.add_argument("--servers-beside-workers", action="store_true")
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds; for kill tests")
    parser.add_argument("--job-dir", help="AI Platform's jobDir; outputs go to vtrain's folders")
    return parser.parse_args()


def data(epoch: int, step: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Global batch `step` of `epoch`: the same on every replica, in every run."""
    rng = np.random.RandomState(1000 * (epoch + 1) + step)
    x = rng.uniform(-1, 1, size=(batch, FEATURES)).astype("float32")
    y = x @ (np.arange(1, FEATURES + 1, dtype="float32") / FEATURES) + 0.5
    return x, y.reshape(-1, 1)


def main() -> None:
    args = parse_args()
    # Before `import mxnet`: the DMLC variables must be set when MXNet loads. The
    # scheduler and the parameter servers never return from here.
    handle = vtrain.plugins.get("mxnet").configure(
        kvstore=args.kvstore,
        chief_trains=args.chief_trains,
        servers_beside_workers=args.servers_beside_workers,
    )
    import mxnet as mx
    from mxnet import autograd, gluon

    with handle:
        if handle.rank is None:
            print(f"{handle.role} is outside the kvstore: nothing to train")
            return
        print(f"worker rank {handle.rank} of {handle.world_size}, leader: {handle.is_leader}")
        handle.track.autolog().params(vars(args))  # the job's one run, reopened after a restart
        mx.random.seed(0)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(16, activation="relu", in_units=FEATURES))
        net.add(gluon.nn.Dense(1, in_units=16))
        net.initialize(mx.init.Xavier())
        net.hybridize()
        trainer = handle.trainer(
            net.collect_params(), "sgd", {"learning_rate": args.learning_rate, "momentum": 0.9}
        )
        loss_fn = gluon.loss.L2Loss()
        resumed = handle.resume(net, trainer)
        done = resumed.done  # steps
        per_epoch = args.steps_per_epoch
        if resumed:
            mid = f" + {done % per_epoch} steps" if done % per_epoch else ""
            print(f"resumed from epoch {done // per_epoch}{mid}")
        for epoch in range(done // per_epoch, args.epochs):
            total = 0.0
            for step in range(done - epoch * per_epoch, per_epoch):
                x, y = data(epoch, step, args.global_batch_size)
                part = slice(handle.rank, None, handle.world_size)
                with autograd.record():
                    loss = loss_fn(net(mx.nd.array(x[part])), mx.nd.array(y[part]))
                loss.backward()
                # Gradients are summed over the workers: scale by the global batch.
                trainer.step(args.global_batch_size)
                total += float(loss.sum().asscalar())
                done += 1
                handle.step(done)  # the watchdog and `vtrain local run`'s live view count it
                if handle.preempted:  # a worker got SIGTERM: every worker stops here
                    handle.save_checkpoint(done, net, trainer)  # commits, then exits 143
                time.sleep(args.step_delay)
            x, y = data(-1, 0, 256)
            mse = float(((net(mx.nd.array(x)).asnumpy() - y) ** 2).mean())
            print(f"epoch {epoch + 1}: train loss {total:.4f}, eval mse {mse:.5f}")
            handle.report(mse, tag="mse", step=done)  # at the step count, as commits are
            handle.save_checkpoint(done, net, trainer)
        where = handle.save_model(net)
        if where:
            print(f"model saved to {where}")
        values = [
            float(v) for p in net.collect_params().values() for v in p.data().asnumpy().ravel()
        ]
        print("final parameters", json.dumps(values))
    vtrain.print_outputs()  # run alone: where the model, checkpoints, logs and metric are


if __name__ == "__main__":
    main()
