"""Save step 7 with `note="x"` beside the net and trainer, or resume it; say what came back.

argv: RESULTS. A worker that finds no commit trains one step and saves it with the note;
one that finds it writes RESULTS/resumed-rank-R.json: the step done and Resumed.extra.
"""

import json
import sys
from pathlib import Path

import vtrain

results = Path(sys.argv[1])
# Before `import mxnet`: the scheduler and the server never return from here.
handle = vtrain.plugins.get("mxnet").configure()
import mxnet as mx  # noqa: E402
from mxnet import autograd, gluon  # noqa: E402

with handle:
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize(mx.init.Zero())
    trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    found = handle.resume(net, trainer)
    if found:
        said = {"done": found.done, "extra": dict(found.extra), "uri": found.uri}
        (results / f"resumed-rank-{handle.rank}.json").write_text(json.dumps(said))
    else:
        with autograd.record():
            loss = (net(mx.nd.ones((2, 1))) - 1.0).square().sum()
        loss.backward()
        trainer.step(2 * handle.world_size)
        handle.save_checkpoint(7, net, trainer, note="x")
