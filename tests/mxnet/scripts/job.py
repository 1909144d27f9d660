"""A few dist_sync steps through vtrain's MXNet plugin; prints what the tests check.

argv: --chief-trains, --servers-beside-workers. LATE=role:index:seconds makes that
replica start late; FAIL=role:index makes that one raise inside `with handle:`.
RESULTS=folder receives one JSON file per training replica.
"""

import json
import os
import signal
import sys
import time

import vtrain

late = os.environ.get("LATE")
if late:
    role, index, seconds = late.split(":")
    me = vtrain.ClusterInfo.from_env()
    if (me.role, me.index) == (role, int(index)):
        time.sleep(float(seconds))

handle = vtrain.plugins.get("mxnet").configure(
    chief_trains="--chief-trains" in sys.argv,
    servers_beside_workers="--servers-beside-workers" in sys.argv,
)
import mxnet as mx  # noqa: E402 - after configure(), as the plugin asks

# The scheduler ends once every worker has left MXNet's job, and its exit ends the job:
# the platform's SIGTERM may then reach a worker still checking its children below. Let
# it finish within the grace period, as a platform allows.
signal.signal(signal.SIGTERM, lambda *_: None)

children = handle.children
with handle:
    if os.environ.get("FAIL") == f"{handle.role}:{handle.info.index}":
        raise RuntimeError("FAIL: this replica fails inside `with handle:`")
    # Every worker pushes rank + 1 three times; the kvstore sums them. MXNet does not order
    # two pushes of one key (KVStore.push's docs): each round reads its pull first.
    total = mx.nd.zeros((3,))
    handle.kvstore.init(7, mx.nd.zeros((3,)))
    for _ in range(3):
        handle.kvstore.push(7, mx.nd.ones((3,)) * (handle.rank + 1))
        handle.kvstore.pull(7, out=total)
        total.wait_to_read()
    result = {
        "role": handle.role,
        "index": handle.info.index,
        "rank": handle.rank,
        "world_size": handle.world_size,
        "is_leader": handle.is_leader,
        "leader": os.environ["VTRAIN_LEADER"],
        "sum": float(total.asnumpy()[0]),
        "children": children,
        "pid": os.getpid(),
    }
    handle.report(1.0 + handle.rank, step=1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# close() has let the scheduler and server children end: none is left to outlive us.
result["children_alive_after_close"] = [p for p in children.values() if alive(p)]
with open(os.path.join(os.environ["RESULTS"], f"{handle.role}-{handle.info.index}.json"), "w") as f:
    json.dump(result, f)
