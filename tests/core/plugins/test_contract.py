"""The plugin contract, with a plugin defined here and registered at runtime.

In-process checks use plain dicts; the end-to-end test runs the plugin under a
real local cluster: a serving chief and parameter server on real sockets, a
non-chief leader, and a chief that starts late.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec

import vtrain
from vtrain import ClusterInfo, ConfigError, UsageError, plugins
from vtrain.local import Plan, run_job

RELAY = Path(__file__).parent / "relay"
sys.path.insert(0, str(RELAY))
from relay_plugin import RelayPlugin  # noqa: E402

# Vertex: workerpool0 = chief, 1 = two workers, 2 = two ps, 3 = one evaluator.
VERTEX = {pool: cluster_spec(VERTEX_CLUSTER, pool, 0) for pool in VERTEX_CLUSTER}


@pytest.fixture
def relay() -> Iterator[RelayPlugin]:
    plugins.register("relay", RelayPlugin, replace=True)
    yield plugins.get("relay", {})  # type: ignore[misc]
    plugins.unregister("relay")


def test_the_environment_is_a_pure_function_of_the_cluster(relay: RelayPlugin) -> None:
    info = ClusterInfo.from_env({"CLUSTER_SPEC": VERTEX["workerpool1"]})
    env: dict[str, str] = {}
    variables = relay.environment(info, env)
    assert variables == relay.environment(info, env) and env == {}
    assert variables["RELAY_NUM_WORKERS"] == "2"
    assert variables["RELAY_COORDINATOR"] == info.cluster["chief"][0]


def test_serving_roles_and_the_leader_are_the_plugins_to_say(relay: RelayPlugin) -> None:
    roles = {pool: ClusterInfo.from_env({"CLUSTER_SPEC": doc}) for pool, doc in VERTEX.items()}
    assert [relay.serves(i) for i in roles.values()] == [True, False, True, False]
    assert relay.leader(roles["workerpool1"]) == ("worker", 0)
    # The base's choice: the chief, or worker 0 where there is no chief.
    assert plugins.Plugin.leader(relay, roles["workerpool1"]) == ("chief", 0)


def test_prepare_exports_the_leader_and_the_core_follows_it(
    relay: RelayPlugin, tmp_path: Path
) -> None:
    base = {"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "m"), "VTRAIN_OUTPUT_DIR": str(tmp_path)}
    worker0 = {**base, "CLUSTER_SPEC": VERTEX["workerpool1"]}
    # Without the plugin's word the chief leads: worker 0 writes nothing.
    assert not vtrain.hypertune.report(1.0, environ=worker0)
    assert not vtrain.CheckpointManager(environ=worker0).is_leader

    info = relay.prepare(None, worker0)
    assert info.role == "worker" and worker0["VTRAIN_LEADER"] == "worker:0"
    assert worker0["RELAY_SERVERS"] == ",".join(info.cluster["ps"])
    assert vtrain.hypertune.report(1.0, environ=worker0)
    assert vtrain.CheckpointManager(environ=worker0).is_leader
    chief = {**base, "CLUSTER_SPEC": VERTEX["workerpool0"], "VTRAIN_LEADER": "worker:0"}
    assert not vtrain.hypertune.report(2.0, environ=chief)
    assert not vtrain.CheckpointManager(environ=chief).is_leader
    assert [json.loads(line)["training/hptuning/metric"] for line in
            (tmp_path / "m").read_text().splitlines()] == ["1.0"]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("boss", r"VTRAIN_LEADER: not a replica \(got 'boss'\); expected role:index"),
        ("worker:x", r"VTRAIN_LEADER: not a replica \(got 'worker:x'\)"),
        ("worker:2", r"VTRAIN_LEADER: the cluster has 2 worker replica\(s\) \(got 'worker:2'\)"),
        ("evaluator:3", r"the cluster has 3 evaluator replica\(s\)"),
    ],
)
def test_a_bad_leader_variable_is_named(value: str, message: str) -> None:
    env = {"CLUSTER_SPEC": VERTEX["workerpool1"], "VTRAIN_LEADER": value}
    with pytest.raises(ConfigError, match=message):
        vtrain.hypertune.report(1.0, environ=env)


def test_a_misspelt_option_is_refused_with_the_real_names(relay: RelayPlugin) -> None:
    with pytest.raises(
        UsageError,
        match=r"relay.configure: unknown option \(got \['wiat'\]\); "
        r"expected one of info, wait, environ",
    ):
        relay.configure(environ={}, wiat=3)


def test_a_job_with_serving_replicas_and_a_non_chief_leader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "job"
    plan = Plan.from_options(
        [sys.executable, str(RELAY / "relay_job.py")], workers=2, ps=1, output_dir=str(out)
    )
    stream = io.StringIO()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTRAIN_")}
    result = run_job(plan, stream=stream, environ={**env, "RELAY_CHIEF_DELAY": "3"})
    assert result.outcome == "succeeded", stream.getvalue()

    ended = {r.name: r for r in result.replicas}
    # The coordinator ended when the framework said so; the server when the job ended.
    assert (ended["chief-0"].exit_code, ended["chief-0"].stopped) == (0, False)
    assert (ended["ps-0"].exit_code, ended["ps-0"].stopped) == (0, True)

    said = {
        name: json.loads(line.split("relay ", 1)[1])
        for line in stream.getvalue().splitlines()
        for name in ("worker-0", "worker-1")
        if line.startswith(name) and "| relay " in line
    }
    assert said["worker-0"]["is_leader"] and said["worker-0"]["reported"]
    assert not said["worker-1"]["is_leader"] and not said["worker-1"]["reported"]
    # Child processes follow the exported leader too.
    assert said["worker-0"]["child_is_leader"] and not said["worker-1"]["child_is_leader"]
    # The workers waited for the late coordinator, then met through the parameter server.
    assert min(s["waited"] for s in said.values()) > 1.0
    assert sorted(s["total"] for s in said.values()) in ([1, 3], [2, 3])

    metrics = sorted(p.name for p in (out / "hypertune").iterdir())
    assert metrics == ["worker-0.metrics"]
    steps = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert steps == ["step-000000000001"]
    restored = vtrain.CheckpointManager(out / "checkpoints", environ={}).restore()
    assert restored is not None and bytes(restored.files["writer"]) == b"worker-0"
