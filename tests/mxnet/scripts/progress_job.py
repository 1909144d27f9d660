"""Train on `handle.batches` and print the progress the watchdog saw (tests/progressed.py).

argv: MODE. `loop`: each batch taken is the step; `explicit`: the loop calls `handle.step()`.
The split holds 40 records: 10 batches of 4.
"""

import sys

from progressed import said

import vtrain

mode = sys.argv[1]
handle = vtrain.plugins.get("mxnet").configure()
import mxnet as mx  # noqa: E402  (after configure, as MXNet needs)
from mxnet import autograd, gluon  # noqa: E402

net = gluon.nn.Dense(1, in_units=1)
net.initialize(mx.init.Zero())
trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 1e-3})
loss_of = gluon.loss.L2Loss()
batches = handle.batches(handle.stream("training"), data=["x"], label="y", batch_size=4)
for step, batch in enumerate(batches, start=1):
    with autograd.record():
        loss = loss_of(net(batch.data[0]), batch.label[0])
    loss.backward()
    trainer.step(4)
    if mode == "explicit":
        handle.step(step)
said()
handle.close()
