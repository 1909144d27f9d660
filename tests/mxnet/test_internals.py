"""Each MXNet internal the plugin uses (vtrain_mxnet.internals), on the installed MXNet.

An upgrade that moves one fails here, with the name of what moved and the version
the plugin was checked on, instead of a job that hangs at its end or a checkpoint
without its optimizer states.
"""

from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from mxnet import autograd, gluon

from vtrain import PluginError
from vtrain_mxnet import internals
from vtrain_mxnet.ordered_trainer import OrderedTrainer

# Two CPU contexts: a Trainer makes a (local) kvstore only for more than one device.
CONTEXTS = [mx.cpu(0), mx.cpu(1)]


def dense() -> gluon.nn.Dense:
    net = gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.One(), ctx=CONTEXTS)
    return net


def one_step(net: gluon.Block, trainer: gluon.Trainer) -> None:
    for ctx in CONTEXTS:
        with autograd.record():
            loss = net(mx.nd.ones((1, 2), ctx=ctx)).sum()
        loss.backward()
    trainer.step(2)


def test_a_missing_internal_is_named_with_the_version_checked_on() -> None:
    with pytest.raises(
        PluginError,
        match=rf"mxnet.__version__: this MXNet has no KVStore._barrier, which vtrain's MXNet "
        rf"plugin uses \(got '{mx.__version__}'\); expected the MXNet vtrain_mxnet.internals "
        rf"was checked on \(1\.9\.1\)\. Hint: install MXNet 1\.9",
    ):
        internals.barrier(object())


def test_a_kvstore_waits_at_the_barrier_and_is_freed_with_or_without_the_exit_barrier() -> None:
    for exit_barrier in (True, False):
        kvstore = mx.kv.create("local")
        internals.barrier(kvstore)
        if not exit_barrier:
            internals.skip_exit_barrier(kvstore)
        internals.free(kvstore)
        assert kvstore.handle.value is None
        del kvstore  # its own __del__ now frees NULL, which must not fail


@pytest.mark.parametrize("on_kvstore", [False, True])
def test_where_a_trainer_runs_its_optimizer(on_kvstore: bool) -> None:
    net = dense()
    trainer = gluon.Trainer(
        net.collect_params(),
        "sgd",
        {"learning_rate": 0.1},
        kvstore="local",
        update_on_kvstore=on_kvstore,
    )
    assert internals.trainer_kvstore(trainer) is None  # made at the first step
    assert internals.states_are_local(trainer) is not on_kvstore
    assert internals.trainer_kvstore(trainer).type == "local"


def test_a_trainer_broadcasts_its_initialized_parameters_at_its_first_step() -> None:
    calls = []

    class Noting(OrderedTrainer):  # type: ignore[misc]
        def _init_params(self) -> None:
            calls.append(len(internals.to_broadcast(self)))
            super()._init_params()

    net = dense()
    trainer = Noting(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore="local")
    one_step(net, trainer)
    # The hook ran once, and broadcast the weight and the bias; nothing is left to.
    assert calls == [2], (
        f"MXNet {mx.__version__}'s Trainer.step no longer calls _init_params, the hook "
        f"OrderedTrainer orders the first broadcast in (checked on {internals.CHECKED_ON})"
    )
    assert internals.to_broadcast(trainer) == []
    assert np.allclose(net.weight.data(CONTEXTS[1]).asnumpy(), 1 - 0.1)


def test_a_parameter_whose_initialization_is_deferred_is_not_broadcast_yet() -> None:
    waiting = gluon.nn.Dense(1)  # in_units unknown: the weight waits for the first input
    waiting.initialize(ctx=CONTEXTS)
    trainer = gluon.Trainer(waiting.collect_params(), "sgd", kvstore="local")
    assert internals.to_broadcast(trainer) == [waiting.bias]


def test_a_hybridized_network_that_has_run_has_a_graph_to_export() -> None:
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(1, in_units=2))
    net.initialize()
    assert not internals.has_run_hybridized(net)
    net.hybridize()
    assert not internals.has_run_hybridized(net)
    net(mx.nd.ones((1, 2)))
    assert internals.has_run_hybridized(net)
    plain = gluon.nn.Sequential()
    plain.add(gluon.nn.Dense(1, in_units=2))
    assert not internals.has_run_hybridized(plain)
