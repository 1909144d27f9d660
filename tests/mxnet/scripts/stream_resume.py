"""One epoch of a Gluon model on handle.stream(), committing its position at every step.

argv: RESULTS RUN [DIE_AFTER]. Every worker appends {"step", "ids"} per step to
RESULTS/ids-RUN-rank-R.jsonl. With DIE_AFTER, in a run that started fresh, worker 0
reads one more batch after that step's commit, then dies (SIGKILL) like a lost VM.
A resume on fewer workers deals what is left unevenly: a worker out of records first gets
batches of padding alone, trains on no row (a zero loss) and still steps with the others.
"""

import json
import os
import signal
import sys
from pathlib import Path

import vtrain

results, run = Path(sys.argv[1]), sys.argv[2]
die_after = int(sys.argv[3]) if len(sys.argv) > 3 else None
# Before `import mxnet`: the scheduler and the server never return from here.
handle = vtrain.plugins.get("mxnet").configure()
import mxnet as mx  # noqa: E402
from mxnet import autograd, gluon  # noqa: E402

with handle:
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize(mx.init.Zero())
    trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 1e-6})
    resumed = handle.resume(net, trainer)
    data = handle.stream(resume=resumed)
    batches = handle.batches(data, data=["x"], label="id", batch_size=4, last_batch="pad")
    log = results / f"ids-{run}-rank-{handle.rank}.jsonl"
    step = resumed.done
    loss_of = gluon.loss.L2Loss()
    for batch in batches:
        step += 1
        ids = [int(i) for i in batch.label[0].asnumpy()[: 4 - batch.pad]]
        with log.open("a") as f:
            f.write(json.dumps({"step": step, "ids": ids}) + "\n")
        dying = die_after is not None and not resumed and step == die_after + 1
        if dying and (handle.role, handle.info.index) == ("worker", 0):
            os.kill(os.getpid(), signal.SIGKILL)
        real = mx.nd.array([1.0] * (4 - batch.pad) + [0.0] * batch.pad)
        with autograd.record():
            loss = loss_of(net(batch.data[0]), batch.label[0]) * real  # the real rows only
        loss.backward()
        trainer.step(4)  # on a batch of padding alone too: the other workers wait for its push
        handle.save_checkpoint(step, net, trainer, data=data, blocking=True)
        if die_after is not None and not resumed and step == die_after:
            handle.barrier()  # the leader's commit of this step is done on every worker
    # Under dist_sync every worker applies the same summed gradients: equal at the end.
    trained = [p.data().asnumpy().ravel().tolist() for p in net.collect_params().values()]
    (results / f"params-{run}-rank-{handle.rank}.json").write_text(json.dumps(trained))
