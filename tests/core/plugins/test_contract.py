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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec

import vtrain
from vtrain import ClusterInfo, ConfigError, UsageError, plugins
from vtrain.local import Plan, run_job
from vtrain.plugins.handle import Handle, Resumed

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
    assert [
        json.loads(line)["training/hptuning/metric"]
        for line in (tmp_path / "m").read_text().splitlines()
    ] == ["1.0"]


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


# -- the common vocabulary: what every handle inherits from the core's Handle ----------------


@dataclass(frozen=True)
class NotesHandle(Handle):
    """A handle whose model is a str, written as a file; counts the writes it was asked for."""

    writes: list[str] = field(default_factory=list)
    model_name: ClassVar[str] = "notes.txt"

    def write_model(self, model: Any, folder: str, name: str) -> str:
        self.writes.append(name)
        Path(folder, name).write_text(str(model))
        Path(folder, name + ".meta").write_text("beside it")  # every file a save made goes up
        return name


@dataclass(frozen=True)
class CollectiveNotesHandle(NotesHandle):
    saves_collectively: ClassVar[bool] = True


def job_environ(tmp_path: Path, pool: str) -> dict[str, str]:
    """A replica's own environment, unlike os.environ: where its model, checkpoints, metric go."""
    return {
        "CLUSTER_SPEC": VERTEX[pool],
        "AIP_MODEL_DIR": str(tmp_path / "model"),
        "AIP_CHECKPOINT_DIR": str(tmp_path / "checkpoints"),
        "AIP_TENSORBOARD_LOG_DIR": str(tmp_path / "logs"),
        "CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "metrics"),
        "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "part-*.jsonl"),
    }


def handle_of(tmp_path: Path, pool: str, kind: type[NotesHandle] = NotesHandle) -> NotesHandle:
    env = job_environ(tmp_path, pool)
    info = ClusterInfo.from_env(env)
    return kind(info=info, is_leader=info.role == "chief", environ=env)


def test_a_handle_places_this_trainer_and_deals_it_a_share(tmp_path: Path) -> None:
    chief, worker, ps = (
        handle_of(tmp_path, p) for p in ("workerpool0", "workerpool1", "workerpool2")
    )
    assert (chief.rank, chief.world_size, chief.role) == (0, 3, "chief")
    assert (worker.rank, worker.world_size, worker.role) == (1, 3, "worker")
    assert (ps.rank, ps.world_size) == (None, 0)
    files = [f"f{i}" for i in range(7)]
    assert worker.shard(files) == ["f1", "f4"]
    dealt = sorted(f for h in (chief, worker) for f in h.shard(files))
    assert set(dealt) <= set(files) and len(dealt) == len(set(dealt))
    with pytest.raises(UsageError, match=r"shard: a ps replica has no share"):
        ps.shard(files)

    (tmp_path / "data").mkdir()
    for i in range(5):
        (tmp_path / "data" / f"part-{i}.jsonl").write_text('{"x": 1}\n')
    # The split's address comes from the handle's environment, not this process's.
    assert [Path(f).name for f in worker.share("training")] == ["part-1.jsonl", "part-4.jsonl"]


def test_report_and_save_model_follow_the_handle_and_its_environment(tmp_path: Path) -> None:
    assert "AIP_MODEL_DIR" not in os.environ or os.environ["AIP_MODEL_DIR"] != str(tmp_path)
    leader, other = handle_of(tmp_path, "workerpool0"), handle_of(tmp_path, "workerpool1")

    assert leader.report(0.5, "loss", step=3) and not other.report(0.25, "loss")
    lines = (tmp_path / "metrics").read_text().splitlines()
    assert [(json.loads(x)["loss"], json.loads(x)["global_step"]) for x in lines] == [("0.5", "3")]

    uri = leader.save_model("weights")
    assert uri is not None and Path(uri) == tmp_path / "model" / "notes.txt"
    assert (tmp_path / "model" / "notes.txt").read_text() == "weights"
    assert (tmp_path / "model" / "notes.txt.meta").exists()
    # A replica that does not lead writes nothing, and is not even asked to.
    assert other.save_model("other weights") is None and other.writes == []
    assert (tmp_path / "model" / "notes.txt").read_text() == "weights"


def test_a_collective_save_runs_everywhere_and_only_the_leaders_copy_lands(tmp_path: Path) -> None:
    other = handle_of(tmp_path, "workerpool1", CollectiveNotesHandle)
    assert other.save_model("a worker's copy", name="m.txt") is None
    assert other.writes == ["m.txt"] and not (tmp_path / "model").exists()
    leader = handle_of(tmp_path, "workerpool0", CollectiveNotesHandle)
    assert leader.save_model("the chief's", name="m.txt") == str(tmp_path / "model" / "m.txt")


def test_checkpoints_are_one_leader_aware_manager_per_handle(tmp_path: Path) -> None:
    leader, other = handle_of(tmp_path, "workerpool0"), handle_of(tmp_path, "workerpool1")
    manager = leader.checkpoints
    assert manager is leader.checkpoints is leader.checkpoint_manager(keep=2)
    assert manager.is_leader and not other.checkpoints.is_leader
    assert manager.directory == str(tmp_path / "checkpoints")
    for step in (1, 2, 3):
        manager.save(step, b"state")
    assert manager.steps() == [2, 3]  # keep=2, set on the handle's one manager
    assert other.checkpoints.steps() == [2, 3]  # the other replica reads the leader's folder
    elsewhere = leader.checkpoint_manager(str(tmp_path / "elsewhere"))
    assert elsewhere is not manager and elsewhere.directory == str(tmp_path / "elsewhere")


def test_resumed_is_falsy_on_a_fresh_start_and_says_where_it_resumed() -> None:
    fresh = Resumed()
    assert not fresh and fresh.done == 0 and fresh.uri is None and dict(fresh.extra) == {}
    assert "starting fresh" in fresh.describe()
    found = Resumed(done=120, uri="gs://b/run/checkpoints/step-000000000120")
    assert found and found.describe() == (
        "vtrain: resumed from gs://b/run/checkpoints/step-000000000120 (120 done)"
    )
