"""The handle in one process, with real XGBoost: callbacks, resume, the model file, bad options.

The collective itself is tested across processes in test_cluster.py; here the
eleven-trainer check forks processes that meet at a real tracker on 127.0.0.1.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import re
import resource
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb
from cluster_run import local_run
from platform_examples import VERTEX_CLUSTER, cluster_spec, tf_config

import vtrain
from vtrain import UsageError
from vtrain.checkpoints import CheckpointManager
from vtrain_xgboost import XGBoostHandle

# XGBoost warns that it guesses the format of model.bst; it guesses right (UBJSON).
pytestmark = pytest.mark.filterwarnings("ignore:.*Unknown file format")
WORDS_JOB = str(Path(__file__).parent / "scripts" / "words_job.py")
PARAMS = {"objective": "reg:squarederror", "tree_method": "hist", "max_depth": 3, "nthread": 1}


@pytest.fixture
def alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[XGBoostHandle]:
    """A configured single process writing under tmp_path; configure's exports are undone."""
    for name in (
        "CLUSTER_SPEC",
        "TF_CONFIG",
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "AIP_MODEL_DIR",
        "AIP_CHECKPOINT_DIR",
        "CLOUD_ML_TRIAL_ID",
        "CLOUD_ML_HP_METRIC_TAG",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VTRAIN_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(tmp_path / "metrics"))
    monkeypatch.setenv("VTRAIN_LEADER", "")  # restored (removed) after the test
    with vtrain.plugins.get("xgboost").configure() as handle:
        yield handle  # type: ignore[misc]


def data(rows: int = 600) -> xgb.DMatrix:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 5))
    return xgb.DMatrix(x, label=x @ np.arange(5.0) + np.sin(x[:, 0]))


def train(
    handle: XGBoostHandle, rounds: int, *, stop_after: int | None = None, **params: object
) -> xgb.Booster:
    """Train to `rounds`, resuming from the handle's checkpoints; stop early if asked."""
    resumed = handle.resume()
    d = data()
    target = rounds if stop_after is None else stop_after
    return xgb.train(
        {**PARAMS, **params},
        d,
        num_boost_round=target - resumed.done,
        xgb_model=resumed.state,
        evals=[(d, "train")],
        callbacks=handle.callbacks(checkpoint_every=5, metric="train-rmse"),
        verbose_eval=False,
    )


def test_importing_the_plugin_loads_no_xgboost() -> None:
    code = (
        "import sys, vtrain, vtrain_xgboost; vtrain.plugins.get('xgboost'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('xgboost', 'numpy')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_one_process_trains_with_no_tracker(alone: XGBoostHandle) -> None:
    assert (alone.rank, alone.world_size, alone.is_leader) == (0, 1, True)
    assert alone.link is None and not alone.distributed
    assert alone.rendezvous is not None and alone.rendezvous.tracker_address is None
    assert alone.rows(10) == slice(0, 10)


def test_a_resumed_run_ends_with_the_uninterrupted_model(
    alone: XGBoostHandle, tmp_path: Path
) -> None:
    train(alone, 30, stop_after=17)  # a job that stopped after round 17; 15 was committed
    assert alone.resume().done == 17  # the final round is committed when training ends
    resumed = train(alone, 30)
    fresh = xgb.train(PARAMS, data(), num_boost_round=30)
    assert resumed.get_dump(with_stats=True) == fresh.get_dump(with_stats=True)


def test_with_subsampling_a_resumed_run_differs(alone: XGBoostHandle) -> None:
    # The random state is not in the model: after a resume the samples drawn differ. This
    # documents why the deterministic configuration (hist, subsample=1) is the one to resume.
    train(alone, 20, stop_after=10, subsample=0.5)
    resumed = train(alone, 20, subsample=0.5)
    fresh = xgb.train({**PARAMS, "subsample": 0.5}, data(), num_boost_round=20)
    assert resumed.num_boosted_rounds() == fresh.num_boosted_rounds() == 20
    assert resumed.get_dump() != fresh.get_dump()


def test_checkpoints_keep_the_newest_and_every_nth(alone: XGBoostHandle) -> None:
    d = data()
    xgb.train(
        PARAMS,
        d,
        num_boost_round=23,
        verbose_eval=False,
        callbacks=alone.callbacks(checkpoint_every=2, keep=2, keep_every=10),
    )
    assert alone.checkpoints.steps() == [10, 20, 22, 23]


def test_the_metric_is_reported_once_per_reporting_round(
    alone: XGBoostHandle, tmp_path: Path
) -> None:
    d = data()
    xgb.train(
        PARAMS,
        d,
        num_boost_round=20,
        evals=[(d, "validation")],
        verbose_eval=False,
        callbacks=alone.callbacks(
            checkpoint_every=None, metric="validation-rmse", report_every=5, tag="rmse"
        ),
    )
    lines = [json.loads(line) for line in (tmp_path / "metrics").read_text().splitlines()]
    assert [line["global_step"] for line in lines] == ["5", "10", "15", "20"]
    assert float(lines[-1]["rmse"]) < float(lines[0]["rmse"])
    # Another replica, same callbacks: it writes nothing.
    follower = dataclasses.replace(alone, is_leader=False)
    xgb.train(
        PARAMS,
        d,
        num_boost_round=5,
        evals=[(d, "validation")],
        verbose_eval=False,
        callbacks=follower.callbacks(metric="validation-rmse"),
    )
    assert len((tmp_path / "metrics").read_text().splitlines()) == 4
    assert follower.save_model(xgb.train(PARAMS, d, 1)) is None


def test_an_unknown_metric_lists_the_known_ones(alone: XGBoostHandle) -> None:
    d = data()
    with pytest.raises(
        UsageError,
        match=r"callbacks\(metric=\): no such evaluation result "
        r"\(got 'valid-rmse'\); expected one of train-rmse, train-mae",
    ):
        xgb.train(
            {**PARAMS, "eval_metric": ["rmse", "mae"]},
            d,
            3,
            evals=[(d, "train")],
            callbacks=alone.callbacks(metric="valid-rmse"),
            verbose_eval=False,
        )


def test_model_bst_loads_back_also_from_an_estimator(alone: XGBoostHandle, tmp_path: Path) -> None:
    booster = xgb.train(PARAMS, data(), 7)
    where = alone.save_model(booster)
    assert where == str(tmp_path / "model" / "model.bst")
    loaded = xgb.Booster(model_file=where)
    assert loaded.get_dump() == booster.get_dump()
    estimator = xgb.XGBRegressor(n_estimators=4, tree_method="hist").fit(np.eye(4), np.arange(4.0))
    assert xgb.Booster(model_file=alone.save_model(estimator)).num_boosted_rounds() == 4


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"checkpoint_every": 0},
            r"callbacks\(checkpoint_every=\): not a positive count \(got 0\)",
        ),
        ({"metric": "m", "report_every": 1.5}, r"callbacks\(report_every=\): not a positive count"),
        ({"metric": ""}, r"callbacks\(metric=\): not a metric name \(got ''\)"),
        ({"keep": 0}, r"keep: not a positive count \(got 0\)"),
    ],
)
def test_bad_callback_options_are_named(alone: XGBoostHandle, options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        alone.callbacks(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"wait": 30},
            r"xgboost.configure\(wait=\): not a duration of a second or more \(got 30\)",
        ),
        ({"timeout": timedelta(0)}, r"xgboost.configure\(timeout=\): not a duration"),
        (
            {"wiat": timedelta(1)},
            r"xgboost.configure: unknown option \(got \['wiat'\]\); "
            r"expected one of info, wait, timeout, environ",
        ),
    ],
)
def test_bad_configure_options_are_named(options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        vtrain.plugins.get("xgboost").configure(environ={}, **options)


def test_a_ps_replica_gets_a_handle_outside_the_collective() -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool2", 1)}
    handle = vtrain.plugins.get("xgboost").configure(environ=env)
    assert (handle.rank, handle.world_size, handle.is_leader) == (
        None,
        0,
        False,
    )
    assert "DMLC_TASK_ID" not in env
    with pytest.raises(UsageError, match=r"rows: a ps replica has no share: it does not train"):
        handle.rows(100)
    handle.close()


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _trainer(env: dict[str, str], out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from xgboost import collective

    with vtrain.plugins.get("xgboost").configure(environ=env, wait=timedelta(seconds=60)) as h:
        out.put((h.rank, collective.get_rank(), env["DMLC_TASK_ID"]))


def test_eleven_trainers_get_tracker_rank_equal_to_their_rank() -> None:
    # Eleven: task ids "00" … "10". Unpadded, the tracker would rank task "10" second.
    ports = _free_ports(11)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    envs = [{"TF_CONFIG": tf_config(cluster, "chief", 0)}] + [
        {"TF_CONFIG": tf_config(cluster, "worker", i)} for i in range(10)
    ]
    context = multiprocessing.get_context("fork")  # xgboost is imported once, here
    out = context.Queue()
    procs = [context.Process(target=_trainer, args=(env, out)) for env in reversed(envs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 11
    seen = sorted(out.get(timeout=5) for _ in range(11))
    assert seen == [(r, r, f"{r:02d}") for r in range(11)]


def test_two_trainers_speak_the_common_words_from_the_environment_they_were_given(
    tmp_path: Path,
) -> None:
    # Each replica's own environment names the run's folders (under out/); the environment
    # configure was given names others (under given/): everything must land in the latter.
    given, out, found = tmp_path / "given", tmp_path / "out", tmp_path / "results"
    found.mkdir()
    run = local_run(
        out,
        ["--workers", "1", "--max-restarts", "0"],
        [WORDS_JOB],
        GIVEN=str(given),
        RESULTS=str(found),
    )
    assert run.returncode == 0, run.output
    chief, worker = (json.loads((found / f"{n}.json").read_text()) for n in ("chief-0", "worker-0"))
    assert [chief["rank"], worker["rank"]] == [0, 1]

    # resume: a fresh start is falsy and empty; then rounds done, the booster, the step's URI,
    # the same on both ranks (the final round is committed when training ends).
    assert chief["fresh"] == worker["fresh"] == [0, None, None, False]
    assert chief["resumed"] == worker["resumed"]
    done, uri, found_one = chief["resumed"]
    assert (done, found_one) == (6, True)
    assert uri.startswith(str(given / "checkpoints")) and uri.rstrip("/").endswith("6")
    assert chief["same_booster"] and worker["same_booster"]
    # save_checkpoint(step, booster, **extra): what was saved beside it comes back.
    assert chief["noted"] == worker["noted"] == [7, {"note": "x", "world_size": 2}, True, False]

    # shard deals round-robin, as on every handle; row_block is the contiguous split.
    assert [chief["shard"], worker["shard"]] == [[0, 2, 4, 6], [1, 3, 5]]
    assert [chief["row_block"], worker["row_block"]] == [[0, 1, 2, 3], [4, 5, 6]]

    # save_model and report: from the leader, into the folders configure was given.
    assert [chief["saved"], worker["saved"]] == [str(given / "model" / "model.bst"), None]
    assert xgb.Booster(model_file=chief["saved"]).num_boosted_rounds() == 6
    assert [chief["reported"], worker["reported"]] == [True, False]
    lines = [json.loads(line) for line in (given / "metrics").read_text().splitlines()]
    assert [line["global_step"] for line in lines] == ["1", "2", "3", "4", "5", "6", "6"]
    assert float(lines[-1]["final"]) == 0.25
    # Nothing in the folders the replicas' own environment names.
    written = [str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()]
    assert [w for w in written if w.startswith(("model", "checkpoints", "hypertune"))] == []


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        ("127.0.0.1", r"no answer \(Connection refused\)"),
        # A platform publishes a replica's name only once it runs: until then it does not resolve.
        ("vtrain-nowhere.invalid", r"the name does not resolve \(.+\)"),
    ],
    ids=["no-tracker", "no-name"],
)
def test_a_worker_whose_tracker_never_comes_fails_at_the_deadline_saying_why(
    host: str, problem: str
) -> None:
    (port,) = _free_ports(1)
    env = {"TF_CONFIG": tf_config({"chief": [f"{host}:{port}"], "worker": ["x:1"]}, "worker", 0)}
    code = (
        "import datetime, vtrain; vtrain.plugins.get('xgboost').configure("
        f"environ={env!r}, wait=datetime.timedelta(seconds=1))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert re.search(
        rf"LaunchError: TF_CONFIG: cluster: XGBoost's tracker did not answer within 1 s: "
        rf"{problem} \(got '{host}:{port}'\)\. Hint: the chief hosts it and may still be starting",
        done.stderr,
    ), done.stderr


def test_a_chief_whose_port_stays_taken_fails_at_the_deadline_saying_why() -> None:
    # A restarted chief finds its port held a while (TIME_WAIT); it retries until `wait` ends.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster = {"chief": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1"]}
        env = {"TF_CONFIG": tf_config(cluster, "chief", 0)}
        code = (
            "import datetime, vtrain; vtrain.plugins.get('xgboost').configure("
            f"environ={env!r}, wait=datetime.timedelta(seconds=1))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
    assert done.returncode != 0
    assert re.search(
        r"LaunchError: TF_CONFIG: cluster: XGBoost's tracker's port did not come free within "
        rf"1 s: .*Address already in use.* \(got '127.0.0.1:{port}'\)\. Hint: the chief's port",
        done.stderr,
    ), done.stderr


def test_a_step_saved_with_extra_resumes_with_it(alone: XGBoostHandle) -> None:
    booster = xgb.train(PARAMS, data(), 3)
    where = alone.save_checkpoint(3, booster, note="x", blocking=True)
    found = alone.resume()
    assert (found.done, found.uri, dict(found.extra)) == (3, where, {"note": "x", "world_size": 1})
    assert found.state.get_dump() == booster.get_dump()
    with pytest.raises(UsageError, match=r"save_checkpoint: takes one booster, got 0 objects"):
        alone.save_checkpoint(4)
    with pytest.raises(UsageError, match=r"resume: takes nothing: the booster comes back"):
        alone.resume(booster)


EXIT_SCRIPT = """
    import sys, numpy as np, xgboost as xgb, vtrain

    handle = vtrain.plugins.get("xgboost").configure(environ={"AIP_CHECKPOINT_DIR": sys.argv[1]})
    train = xgb.DMatrix(np.eye(4), label=np.arange(4.0))
    booster = xgb.train({"nthread": 1}, train, 2, callbacks=handle.callbacks(checkpoint_every=1))
    handle.save_checkpoint(3, booster, note="x" * (2 << 20))  # over the file-size limit, later
    print("end of script", flush=True)
"""


def _limit_file_size() -> None:
    # A write past the limit fails with EFBIG (Python ignores SIGXFSZ): a disk that is full.
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a_background_save_that_fails_at_exit_fails_the_script(tmp_path: Path) -> None:
    # The core's exit rule, as for every framework: the platform must not see a success.
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(EXIT_SCRIPT), str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_file_size,
    )
    assert done.stdout == "end of script\n"
    assert done.returncode == 1, done.stderr
    assert "-c: error: " in done.stderr, done.stderr
    assert "the background save of step 3 failed: " in done.stderr, done.stderr
    assert CheckpointManager(tmp_path / "c", is_leader=False, environ={}).steps() == [1, 2]


def test_batches_are_a_data_iter_of_the_stream(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    lines = [json.dumps({"a": i, "b": i % 3, "y": 2.0 * i}) for i in range(10)]
    (folder / "training-0.jsonl").write_text("\n".join(lines) + "\n")
    env = {"AIP_CHECKPOINT_DIR": str(tmp_path / "c"), "AIP_TRAINING_DATA_URI": f"{folder}/*.jsonl"}
    handle = vtrain.plugins.get("xgboost").configure(environ=env)
    stream = handle.stream("training")
    batches = handle.batches(stream, batch_size=4, label="y")
    matrix = xgb.QuantileDMatrix(batches)
    assert (matrix.num_row(), matrix.num_col(), matrix.feature_names) == (10, 2, ["a", "b"])
    assert batches.passes >= 1 and matrix.get_label().tolist() == [2.0 * i for i in range(10)]
    with handle:
        handle.save_checkpoint(1, xgb.train(PARAMS, matrix, 1), data=batches, blocking=True)
    found = handle.resume()
    # The epoch was read whole into the matrix: the stream goes on with the next one.
    assert found.data is not None and handle.stream("training", resume=found).epoch == 1
    with pytest.raises(UsageError, match=r"batches\(label=\): not a column name"):
        handle.batches(stream, batch_size=4, label="")
