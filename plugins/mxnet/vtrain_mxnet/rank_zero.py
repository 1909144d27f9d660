"""Which replica MXNet made worker rank 0: the leader under the documented mapping.

MXNet's scheduler assigns worker ranks as the workers join, not in the
cluster's list order, so no replica knows before the kvstore exists whether it
is rank 0. `kv.broadcast` hands rank 0's value to every worker (an init from
rank 0, a barrier, a pull) in sync and async mode alike: rank 0 broadcasts its
own (role, index), and every worker learns the same leader.
"""

from __future__ import annotations

from typing import Any

from vtrain import ClusterInfo
from vtrain.cluster import CHIEF, WORKER
from vtrain.cluster.leader import Replica

# A key no Gluon Trainer uses (they number parameters from 0). ps-lite picks a server
# with key * 9973 in a C int: the key must keep that product below 2**31.
KEY = 199_999
_CODES = (CHIEF, WORKER)


def rank_zero_replica(kvstore: Any, info: ClusterInfo) -> Replica:
    """The (role, index) of the replica whose worker has rank 0 in `kvstore`."""
    import mxnet as mx

    mine = mx.nd.array([_CODES.index(info.role), info.index], dtype="float64")
    theirs = mx.nd.zeros((2,), dtype="float64")
    kvstore.broadcast(KEY, mine, out=theirs)
    code, index = (int(x) for x in theirs.asnumpy())
    return (_CODES[code], index)
