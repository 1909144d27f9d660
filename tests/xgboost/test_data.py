"""handle.dmatrix(): a trainer's share of a split as an XGBoost matrix, in memory or external.

The collective is real: `vtrain local run --workers 1` starts a chief and a
worker that each read their own files (scripts/data_job.py) and train together.
The rest runs in this process on files written here.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb
from cluster_run import clean_env, local_run
from platform_examples import VERTEX_CLUSTER, cluster_spec

import vtrain
from vtrain import StorageError, UsageError
from vtrain.data import files
from vtrain_xgboost import XGBoostHandle
from vtrain_xgboost.data import share_bytes, share_dmatrix
from vtrain_xgboost.table import Table

SCRIPT = str(Path(__file__).parent / "scripts" / "data_job.py")
FILES, PER_FILE, VALID_ROWS = 6, 150, [150, 100]
TRAINERS = ("chief-0", "worker-0")


def target(x: np.ndarray) -> np.ndarray:
    return 3 * x[:, 0] - 2 * x[:, 1] + x[:, 2]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A training and a validation split of JSON Lines with y = 3 x0 - 2 x1 + x2; a probe file."""
    folder = tmp_path_factory.mktemp("split")
    rng = np.random.default_rng(7)
    for name, sizes in (("training", [PER_FILE] * FILES), ("validation", VALID_ROWS)):
        for f, size in enumerate(sizes):
            x = rng.uniform(-1, 1, size=(size, 3))
            rows = [
                # Every tenth x2 is missing (null): it must read as NaN, not fail.
                {"x0": a, "x1": b, "x2": None if i % 10 == 3 else c, "y": y}
                for i, ((a, b, c), y) in enumerate(zip(x.tolist(), target(x).tolist(), strict=True))
            ]
            if f % 2:  # the worker's files name the columns in another order
                rows = [dict(reversed(r.items())) for r in rows]
            write_jsonl(folder / f"{name}-{f:05d}.jsonl", rows)
    probe = folder / "probe.json"
    probe.write_text(json.dumps(rng.uniform(-1, 1, size=(200, 3)).tolist()))
    return {
        "AIP_TRAINING_DATA_URI": str(folder / "training-*.jsonl"),
        "AIP_VALIDATION_DATA_URI": str(folder / "validation-*.jsonl"),
        "PROBE": str(probe),
    }


def between_validation_files(split: dict[str, str]) -> str:
    """A memory budget below the chief's validation file and above the worker's."""
    sizes = [os.path.getsize(p) for p in sorted(glob.glob(split["AIP_VALIDATION_DATA_URI"]))]
    assert sizes[0] > sizes[1]
    return str((sizes[0] + sizes[1]) // 2)


def results(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


@pytest.fixture(scope="module")
def alone(split: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """data_job.py as one process on every row, in memory."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("alone")
    done = subprocess.run(
        [sys.executable, SCRIPT],
        env=clean_env(VTRAIN_OUTPUT_DIR=str(out), RESULTS=str(out), **split),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return results(out)["chief-0"]


@pytest.mark.parametrize(
    ("external", "kinds"),
    [(True, ["ExtMemQuantileDMatrix"] * 2), (False, ["QuantileDMatrix"] * 2)],
    ids=["external-memory", "in-memory"],
)
def test_each_trainer_reads_its_share_and_all_train_one_model(
    external: bool, kinds: list[str], split: dict[str, str], alone: dict, tmp_path: Path
) -> None:
    # Below every training share, and below one validation share but not the other: the
    # largest share decides for all, so both trainers take the external path. 64-record
    # batches, so several pages each.
    budget = {"BUDGET": between_validation_files(split), "BATCH_ROWS": "64"} if external else {}
    (tmp_path / "results").mkdir()
    run = local_run(
        tmp_path / "out",
        ["--workers", "1", "--max-restarts", "0"],
        [SCRIPT],
        RESULTS=str(tmp_path / "results"),
        **split,
        **budget,
    )
    assert run.returncode == 0, run.output
    found = results(tmp_path / "results")
    assert sorted(found) == sorted(TRAINERS)
    trainers = [found[name] for name in TRAINERS]
    assert [t["rank"] for t in trainers] == [0, 1] and trainers[0]["world_size"] == 2
    assert [t["kinds"] for t in trainers] == [kinds, kinds]
    # The chief's column order, though the worker's files name the columns in another.
    assert [t["features"] for t in trainers] == [["x0", "x1", "x2"]] * 2
    # By file: three training files each, one validation file each; every row once.
    assert [t["rows"] for t in trainers] == [3 * PER_FILE, 3 * PER_FILE]
    assert [t["valid_rows"] for t in trainers] == VALID_ROWS
    assert alone["rows"] == FILES * PER_FILE and alone["kinds"] == ["QuantileDMatrix"] * 2
    assert sorted(trainers[0]["labels"] + trainers[1]["labels"]) == sorted(alone["labels"])
    # Trained together: the same trees on both.
    assert len({t["model"] for t in trainers}) == 1
    probe = np.array(json.loads(Path(split["PROBE"]).read_text()))
    truth = target(probe)
    predicted = np.array(trainers[0]["predictions"])
    alone_predicted = np.array(alone["predictions"])
    rmse = np.sqrt(np.mean((predicted - truth) ** 2))
    assert rmse < 0.2 * truth.std()  # it learned: about 0.24 against a spread of 2.1
    # The sketches of two shares merge, so trees differ a little from one process on all rows.
    assert rmse == pytest.approx(np.sqrt(np.mean((alone_predicted - truth) ** 2)), rel=0.25)
    assert np.mean(np.abs(predicted - alone_predicted)) < 0.1 * truth.std()


# -- one process ---------------------------------------------------------------------------


def share_of(pattern: Path | str, rank: int = 0, world_size: int = 1, **options: bool) -> object:
    return files(uri=str(pattern), rank=rank, world_size=world_size, environ={}, **options)


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    """Three files of 10 records each: y counts 0..29 across them, in order."""
    for f in range(3):
        rows = [{"y": 10 * f + r, "a": r, "b": -r} for r in range(10)]
        write_jsonl(tmp_path / f"training-{f}.jsonl", rows)
    return tmp_path / "training-*.jsonl"


@pytest.mark.parametrize("quantile", [False, True])
def test_external_memory_reads_every_record_in_order_on_every_pass(
    jsonl: Path, quantile: bool, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    options = {"memory_budget": 1, "batch_rows": 7, "cache_dir": str(cache)}
    matrix = share_dmatrix(share_of(jsonl), label="y", quantile=quantile, **options)
    assert type(matrix).__name__ == ("ExtMemQuantileDMatrix" if quantile else "DMatrix")
    # The quantile matrix passes over the batches more than once: a reset that did not
    # restart the files would leave rows out.
    assert matrix.num_row() == 30 and matrix.num_col() == 2
    assert matrix.get_label().tolist() == list(range(30))
    # XGBoost's pages lie in a folder of their own under cache_dir, while the matrix lives.
    (folder,) = cache.iterdir()
    assert any(p.name.endswith(".page") for p in folder.iterdir())
    booster = xgb.train({"tree_method": "hist", "nthread": 1}, matrix, 3)
    assert booster.num_boosted_rounds() == 3
    del matrix, booster
    assert list(cache.iterdir()) == []


def test_in_memory_and_by_record_shares_hold_every_record_once(jsonl: Path) -> None:
    whole = share_dmatrix(share_of(jsonl), label="y", quantile=False)
    assert type(whole) is xgb.DMatrix and whole.get_label().tolist() == list(range(30))
    assert whole.feature_names == ["a", "b"]  # the first record's order, the label left out
    labels = [
        share_dmatrix(share_of(jsonl, k, 4, by_record=True), label="y").get_label().tolist()
        for k in range(4)
    ]
    assert labels[1] == [1, 5, 9, 13, 17, 21, 25, 29]  # record i of the share's stream, i % 4 == 1
    assert sorted(v for part in labels for v in part) == list(range(30))


def test_csv_numbers_parse_and_empty_fields_are_missing(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("y,a,b,c\n1.5,2,-3e2,x\n0,,nan,x\n-1, 4 ,inf,x\n")
    table = Table(share_of(tmp_path / "t.csv"), label="y", features=["b", "a"], format=None)
    x, y = table.arrays(rows=2)  # two batches, concatenated
    assert y.tolist() == [1.5, 0, -1]
    assert x.dtype == np.float32 and x.shape == (3, 2)
    np.testing.assert_array_equal(x, [[-300, 2], [np.nan, np.nan], [np.inf, 4]])


@pytest.mark.parametrize(
    ("kind", "line", "shown"),
    [
        ("jsonl", '{"y": 1, "a": "abc", "b": 2}\n', "'abc'"),
        ("jsonl", '{"y": 1, "a": [1, 2], "b": 2}\n', r"\[1, 2\]"),
        ("csv", "1,abc,2\n", "'abc'"),
    ],
)
def test_a_value_that_is_no_number_names_file_record_column_and_value(
    kind: str, line: str, shown: str, tmp_path: Path
) -> None:
    good = '{"y": 0, "a": 1, "b": 2}\n' if kind == "jsonl" else "0,1,2\n"
    path = tmp_path / f"t.{kind}"
    path.write_text(("y,a,b\n" if kind == "csv" else "") + good + line)
    with pytest.raises(UsageError) as caught:
        share_dmatrix(share_of(path), label="y")
    message = str(caught.value)
    assert message.startswith(f'{path}: record 2: column "a" is not a number (got ')
    assert caught.match(rf"\(got {shown}\); expected a number")


def test_a_record_without_the_label_names_file_record_and_label(jsonl: Path) -> None:
    with pytest.raises(
        UsageError,
        match=r'training-0.jsonl: record 1: no label: column "target" is absent or empty '
        r"\(got \['y', 'a', 'b'\]\)",
    ):
        share_dmatrix(share_of(jsonl), label="target", features=["a", "b"])


def test_tfrecord_files_have_no_columns(tmp_path: Path) -> None:
    (tmp_path / "t.tfrecord").write_bytes(b"")
    with pytest.raises(UsageError, match=r"t.tfrecord: TFRecord records have no named columns"):
        share_dmatrix(share_of(tmp_path / "t.tfrecord"), label="y")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"label": None}, r"dmatrix\(label=\): not a column name \(got None\)"),
        ({"features": "a"}, r"dmatrix\(features=\): not a list of feature columns \(got 'a'\)"),
        ({"features": ["a", "y"]}, r"dmatrix\(features=\): .*the label not among them"),
        ({"features": ["a", "a"]}, r"dmatrix\(features=\): .*distinct column names"),
        ({"quantile": "yes"}, r"dmatrix\(quantile=\): not a bool"),
        ({"memory_budget": -1}, r"dmatrix\(memory_budget=\): not a count .*an int >= 0"),
        ({"batch_rows": 0}, r"dmatrix\(batch_rows=\): not a count .*an int >= 1"),
        ({"format": "parquet"}, r"format: unknown record format \(got 'parquet'\)"),
    ],
)
def test_bad_arguments_are_named(options: dict, message: str, jsonl: Path) -> None:
    with pytest.raises(UsageError, match=message):
        share_dmatrix(share_of(jsonl), **{"label": "y", **options})


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real GCS JSON-API server on loopback (as tests/core's); its environment."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("gcs") / "emulator.log"
    with open(log, "wb") as out:
        command = [
            sys.executable,
            "-m",
            "gcp_storage_emulator",
            "start",
            "--host=127.0.0.1",
            f"--port={port}",
            "--in-memory",
        ]
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    host = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{host}/storage/v1/b?project=vtrain", timeout=2).close()
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                time.sleep(0.1)
        yield {"STORAGE_EMULATOR_HOST": host}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_gs_split_is_sized_and_read_through_the_storage_client(
    emulator: dict[str, str], jsonl: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vtrain.storage import storage_client

    for name, value in emulator.items():
        monkeypatch.setenv(name, value)
    bucket = storage_client(emulator).create_bucket("vtrain-xgboost-data")
    paths = sorted(jsonl.parent.glob("training-*.jsonl"))
    for path in paths:
        bucket.blob(f"data/{path.name}").upload_from_filename(str(path))
    share = files(uri="gs://vtrain-xgboost-data/data/training-*.jsonl", rank=0, world_size=1)
    assert share_bytes(share) == sum(p.stat().st_size for p in paths)
    matrix = share_dmatrix(share, label="y", memory_budget=1, batch_rows=4)
    assert type(matrix) is xgb.ExtMemQuantileDMatrix
    assert matrix.get_label().tolist() == list(range(30))
    with pytest.raises(
        StorageError, match=r"gs://vtrain-xgboost-data/data/gone.jsonl: cannot size"
    ):
        share_bytes(share.replace(files=("gs://vtrain-xgboost-data/data/gone.jsonl",)))


@pytest.fixture
def handle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[XGBoostHandle]:
    """A configured single process: the whole split is its share."""
    for name in ("CLUSTER_SPEC", "TF_CONFIG", "RANK", "WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.startswith("AIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("VTRAIN_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("VTRAIN_LEADER", "")  # restored (removed) after the test
    with vtrain.plugins.get("xgboost").configure() as handle:
        yield handle  # type: ignore[misc]


def test_the_handle_of_a_single_process_reads_the_whole_split(
    handle: XGBoostHandle, jsonl: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIP_TRAINING_DATA_URI", str(jsonl))
    train = handle.dmatrix(label="y", features=["b"])
    assert type(train) is xgb.QuantileDMatrix and train.num_row() == 30
    assert train.feature_names == ["b"]
    valid = handle.dmatrix(label="y", features=["b"], uri=str(jsonl), ref=train, quantile=True)
    assert valid.num_row() == 30


def test_a_ps_replica_has_no_share_to_read() -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool2", 1)}
    handle = vtrain.plugins.get("xgboost").configure(environ=env)
    with pytest.raises(UsageError, match=r"dmatrix: a ps replica has no share: it does not train"):
        handle.dmatrix(label="y")
    handle.close()
