"""Every private MXNet internal the plugin relies on, one function each; checked on MXNet 1.9.1.

MXNet 1.9 has no public way to do these: wait at ps-lite's barrier, free a
kvstore (leave the job) at a chosen moment, leave it without the barrier at
exit, learn where a Trainer runs its optimizer, find which parameters a
Trainer has still to broadcast, and tell a hybridized network that has run
(the one `export` can write). Besides these, `OrderedTrainer` overrides
`gluon.Trainer._init_params`, the hook `step()` calls for the first broadcast.
A name that an upgrade removes raises `changed()`'s PluginError, and
tests/mxnet/test_internals.py calls each function on real MXNet objects.
Importing this module imports no MXNet.
"""

from __future__ import annotations

import ctypes
from typing import Any

from vtrain.errors import PluginError

CHECKED_ON = "1.9.1"
"""The MXNet version every function here was read against."""


def changed(internal: str) -> PluginError:
    """The error for an MXNet without `internal`, which this module uses."""
    import mxnet

    return PluginError(
        f"this MXNet has no {internal}, which vtrain's MXNet plugin uses",
        source="mxnet.__version__",
        value=mxnet.__version__,
        expected=f"the MXNet vtrain_mxnet.internals was checked on ({CHECKED_ON})",
        hint='install MXNet 1.9 (pip install "vtrain[mxnet]"), or adapt vtrain_mxnet/internals.py',
    )


def _private(owner: Any, name: str, internal: str) -> Any:
    try:
        return getattr(owner, name)
    except AttributeError:
        raise changed(internal) from None


def _call(function: str, *args: Any) -> None:
    """Call MXNet's C API `function`, raising MXNet's own error when it fails."""
    from mxnet import base

    library = _private(base, "_LIB", "mxnet.base._LIB")
    base.check_call(_private(library, function, f"the C function {function}")(*args))


def barrier(kvstore: Any) -> None:
    """Wait at ps-lite's barrier until every worker of `kvstore` reaches it."""
    _private(kvstore, "_barrier", "KVStore._barrier")()


def skip_exit_barrier(kvstore: Any) -> None:
    """Let `kvstore` leave the job without its barrier at exit (which waits for every worker)."""
    # MXNet 1.9's Python KVStore has no method for it; its C API has.
    _call("MXKVStoreSetBarrierBeforeExit", kvstore.handle, ctypes.c_int(0))


def free(kvstore: Any) -> None:
    """Free `kvstore` now: ps-lite's finalize runs here, not at a later garbage collection."""
    _call("MXKVStoreFree", kvstore.handle)
    # Trainers still hold this object: its __del__ then frees NULL, which C++ allows.
    kvstore.handle = ctypes.c_void_p(None)


def states_are_local(trainer: Any) -> bool:
    """True when `trainer` runs its optimizer here (its states can be saved), not on servers."""
    # The Trainer decides where its optimizer runs when its kvstore is first set up.
    if not _private(trainer, "_kv_initialized", "Trainer._kv_initialized"):
        _private(trainer, "_init_kvstore", "Trainer._init_kvstore")()
    return not _private(trainer, "_update_on_kvstore", "Trainer._update_on_kvstore")


def trainer_kvstore(trainer: Any) -> Any:
    """The kvstore `trainer` set up (None before its first step, or without one)."""
    return _private(trainer, "_kvstore", "Trainer._kvstore")


def to_broadcast(trainer: Any) -> list[Any]:
    """The parameters `trainer` will broadcast at its next `_init_params` (initialized ones)."""
    waiting = _private(trainer, "_params_to_init", "Trainer._params_to_init")
    return [p for p in waiting if not _private(p, "_deferred_init", "Parameter._deferred_init")]


def has_run_hybridized(net: Any) -> bool:
    """True for a hybridized network that has run: it has a graph `export` can write."""
    from mxnet import gluon

    if not isinstance(net, gluon.HybridBlock):
        return False
    return bool(_private(net, "_cached_graph", "HybridBlock._cached_graph"))
