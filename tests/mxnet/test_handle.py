"""The handle's common words in one process: resume, save_model, report, rank and world_size.

Each handle is configured with an environment of its own (not this process's):
its folders and its metric file must come from there.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np
import pytest
from mxnet import gluon
from platform_examples import VERTEX_CLUSTER, cluster_spec

from vtrain import UsageError, plugins
from vtrain.plugins.handle import Resumed
from vtrain_mxnet.handle import MXNetHandle


def environment(folder: Path, **extra: str) -> dict[str, str]:
    return {
        "AIP_MODEL_DIR": str(folder / "model"),
        "AIP_CHECKPOINT_DIR": str(folder / "checkpoints"),
        "CLOUD_ML_HP_METRIC_FILE": str(folder / "metrics"),
        **extra,
    }


@pytest.fixture
def away(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Where this process's own environment points: nothing may land there."""
    for name, value in environment(tmp_path / "process").items():
        monkeypatch.setenv(name, value)
    return tmp_path / "process"


def configure(env: dict[str, str]) -> MXNetHandle:
    handle = plugins.get("mxnet").configure(environ=env)
    assert isinstance(handle, MXNetHandle)
    return handle


def net_and_trainer(handle: MXNetHandle, value: float) -> tuple[gluon.Block, gluon.Trainer]:
    net = gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.Constant(value))
    trainer = handle.trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    return net, trainer


def test_resume_says_how_many_epochs_were_done_and_where_from(tmp_path: Path, away: Path) -> None:
    env = environment(tmp_path)
    with configure(env) as handle:
        net, trainer = net_and_trainer(handle, 0.5)
        fresh = handle.resume(net, trainer)
        assert fresh == Resumed() and not fresh and fresh.done == 0
        where = handle.save_checkpoint(3, net, trainer, blocking=True)
        assert where is not None and where.startswith(env["AIP_CHECKPOINT_DIR"])
        other, other_trainer = net_and_trainer(handle, 0.0)
        resumed = handle.resume(other, other_trainer)
    assert resumed and (resumed.done, resumed.uri) == (3, where)
    assert np.allclose(other.weight.data().asnumpy(), 0.5)
    assert not away.exists()


def test_resume_takes_the_trainer_by_keyword_too_and_refuses_other_keywords(
    tmp_path: Path, away: Path
) -> None:
    env = environment(tmp_path)
    with configure(env) as handle:
        net, trainer = net_and_trainer(handle, 0.5)
        handle.save_checkpoint(3, net, trainer, blocking=True)
        other, other_trainer = net_and_trainer(handle, 0.0)
        resumed = handle.resume(other, trainer=other_trainer)
        with pytest.raises(UsageError, match="resume: takes no keywords"):
            handle.resume(other, optimizer=other_trainer)
    assert resumed.done == 3 and np.allclose(other.weight.data().asnumpy(), 0.5)


@pytest.mark.parametrize("hybridized", [False, True])
def test_save_model_writes_the_params_and_a_hybridized_nets_export(
    hybridized: bool, tmp_path: Path, away: Path
) -> None:
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(1, in_units=2))
    net.initialize()
    if hybridized:
        net.hybridize()
    net(mx.nd.ones((1, 2)))
    with configure(environment(tmp_path)) as handle:
        where = handle.save_model(net)
    assert where == str(tmp_path / "model" / "model.params")
    written = sorted(p.name for p in (tmp_path / "model").iterdir())
    export = ["model-0000.params", "model-symbol.json"] if hybridized else []
    assert written == sorted(["model.params", *export])
    assert not away.exists()


def test_report_writes_the_metric_of_the_handles_environment(tmp_path: Path, away: Path) -> None:
    with configure(environment(tmp_path)) as handle:
        assert handle.is_leader
        assert handle.report(0.25, tag="mse", step=3) is True
    [line] = (tmp_path / "metrics").read_text().splitlines()
    entry = json.loads(line)
    assert (entry["mse"], entry["global_step"]) == ("0.25", "3")
    assert not away.exists()


def test_a_replica_off_the_kvstore_has_no_rank_no_share_and_reports_nothing(
    tmp_path: Path, away: Path
) -> None:
    env = environment(tmp_path, CLUSTER_SPEC=cluster_spec(VERTEX_CLUSTER, "workerpool3", 0))
    with configure(env) as handle:
        assert (handle.role, handle.rank, handle.world_size) == ("evaluator", None, 0)
        assert handle.kvstore is None and not handle.is_leader
        assert handle.environ is env
        assert handle.report(0.25, tag="mse", step=1) is False
        with pytest.raises(UsageError, match=r"shard: an? evaluator replica has no share"):
            handle.shard(["a", "b"])
    assert not (tmp_path / "metrics").exists() and not away.exists()
