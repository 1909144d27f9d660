"""Each worker reads its share of AIP_TRAINING_DATA_URI through handle.data_iter, twice.

Prints "EPOCH n [ids]" per pass (padding left out) and trains a linear model on the
batches with dist_sync, so the reads happen inside a real kvstore job.
"""

import json

import vtrain

handle = vtrain.plugins.get("mxnet").configure()
import mxnet as mx  # noqa: E402 - after configure(), as the plugin asks
from mxnet import autograd, gluon  # noqa: E402

with handle:
    batches = handle.data_iter(data=["id", "x"], label="y", batch_size=4)
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize(mx.init.Zero())
    trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    for epoch in range(2):
        batches.reset()
        seen = []
        for batch in batches:
            rows = batch.data[0].asnumpy()[: 4 - batch.pad]
            seen += [int(i) for i in rows[:, 0]]
            with autograd.record():
                loss = gluon.loss.L2Loss()(net(batch.data[0][:, 1:]), batch.label[0])
            loss.backward()
            trainer.step(8)
        print(f"EPOCH {epoch} rank {handle.rank} {json.dumps(seen)}", flush=True)
