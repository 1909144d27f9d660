"""One replica of the MXNet benchmark: argv[1] is "vtrain" (configure()) or "plain" (by hand).

Workers run Gluon dist_sync steps on a small MLP and print FIRST_STEP (seconds from
LAUNCHED, the launcher's clock, to the end of the first step), FIRST_STEP_CPU (this
process's CPU seconds until then) and STEPS_PER_SECOND over the timed steps; vtrain's
side trains with handle.trainer(). The scheduler and the server serve until the
workers finish.
"""

import os
import sys
import time

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
if mode == "vtrain":
    import vtrain

    handle = vtrain.plugins.get("mxnet").configure()
    import mxnet as mx
else:
    import mxnet as mx  # with DMLC_ROLE=scheduler|server this serves, then exits

    kv = mx.kv.create("dist_sync")
from mxnet import autograd, gluon  # noqa: E402

mx.random.seed(0)
net = gluon.nn.HybridSequential()
net.add(
    gluon.nn.Dense(256, activation="relu", in_units=64),
    gluon.nn.Dense(256, activation="relu"),
    gluon.nn.Dense(10),
)
net.initialize(mx.init.Xavier())
net.hybridize()
if mode == "vtrain":
    trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
else:
    trainer = gluon.Trainer(
        net.collect_params(), "sgd", {"learning_rate": 0.01}, kvstore=kv, update_on_kvstore=False
    )
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
x = mx.nd.random.uniform(shape=(64, 64))
y = mx.nd.array([i % 10 for i in range(64)])


def step() -> None:
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(128)
    mx.nd.waitall()


step()
cpu = os.times()
print(f"FIRST_STEP {time.time() - float(os.environ['LAUNCHED']):.3f}", flush=True)
print(f"FIRST_STEP_CPU {cpu.user + cpu.system:.3f}", flush=True)
for _ in range(10):
    step()
start = time.perf_counter()
for _ in range(steps):
    step()
print(f"STEPS_PER_SECOND {steps / (time.perf_counter() - start):.2f}", flush=True)
if mode == "vtrain":
    handle.close()
