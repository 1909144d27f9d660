"""`vtrain.hypertune.report`: cloudml-hypertune's format, written atomically, chief only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import hypertune as cloudml
import pytest

from vtrain.errors import StorageError, UsageError
from vtrain.hypertune import report
from vtrain.hypertune.metric_file import read_entries

NOW = 1525851440.123456
WORKER_SPEC = json.dumps(
    {
        "cluster": {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222"]},
        "task": {"type": "workerpool1", "index": 0},
    }
)
CHIEF_SPEC = json.dumps(
    {
        "cluster": {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222"]},
        "task": {"type": "workerpool0", "index": 0},
    }
)


def read_like_the_service(path: Path, tag: str) -> list[dict[str, Any]]:
    """A reader written against cloudml-hypertune's format, strict about keys and types."""
    entries = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        assert list(entry) == sorted(entry), "keys are sorted"
        assert set(entry) == {"checkpoint_path", "global_step", tag, "timestamp", "trial"}
        assert isinstance(entry["timestamp"], float)
        assert all(isinstance(v, str) for k, v in entry.items() if k != "timestamp")
        entries.append({**entry, tag: float(entry[tag]), "global_step": int(entry["global_step"])})
    return entries


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)


def cloudml_write(
    monkeypatch: pytest.MonkeyPatch, path: Path, reports: list[tuple[Any, ...]]
) -> None:
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    monkeypatch.setenv("CLOUD_ML_TRIAL_ID", "7")
    writer = cloudml.HyperTune()
    for tag, value, step, checkpoint in reports:
        writer.report_hyperparameter_tuning_metric(
            tag, value, global_step=step, checkpoint_path=checkpoint
        )


REPORTS = [
    ("loss", 0.5, None, ""),
    ("loss", 2, 100, "gs://b/ckpt-100"),
    ("", 3.25, 0, ""),
    ("accuracy", "0.75", 7, ""),
]


def test_writes_what_cloudml_hypertune_writes_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frozen_clock: None
) -> None:
    theirs, ours = tmp_path / "theirs.metrics", tmp_path / "ours.metrics"
    cloudml_write(monkeypatch, theirs, REPORTS)
    env = {"CLOUD_ML_HP_METRIC_FILE": str(ours), "CLOUD_ML_TRIAL_ID": "7"}
    for tag, value, step, checkpoint in REPORTS:
        assert report(value, tag or None, step, checkpoint, environ=env)
    assert ours.read_bytes() == theirs.read_bytes()


def test_a_reader_of_the_format_reads_what_report_wrote(tmp_path: Path) -> None:
    path = tmp_path / "m.metrics"
    env = {"CLOUD_ML_HP_METRIC_FILE": str(path), "CLOUD_ML_TRIAL_ID": "3"}
    report(0.25, "auc", 10, "gs://b/c", environ=env)
    report(0.5, "auc", environ=env)
    entries = read_like_the_service(path, "auc")
    assert [(e["auc"], e["global_step"], e["trial"], e["checkpoint_path"]) for e in entries] == [
        (0.25, 10, "3", "gs://b/c"),
        (0.5, 0, "3", ""),
    ]


def test_report_continues_a_file_cloudml_hypertune_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.metrics"
    cloudml_write(monkeypatch, path, [("loss", 1.0, 1, ""), ("loss", 0.5, 2, "")])
    before = path.read_text().splitlines()
    report(
        0.25, "loss", 3, environ={"CLOUD_ML_HP_METRIC_FILE": str(path), "CLOUD_ML_TRIAL_ID": "7"}
    )
    after = path.read_text().splitlines()
    assert after[:2] == before
    assert [e["loss"] for e in read_like_the_service(path, "loss")] == [1.0, 0.5, 0.25]


def test_keeps_the_last_100_entries(tmp_path: Path) -> None:
    path = tmp_path / "m.metrics"
    env = {"CLOUD_ML_HP_METRIC_FILE": str(path)}
    for i in range(130):
        report(i, "loss", i, environ=env)
    assert [e["loss"] for e in read_like_the_service(path, "loss")] == [
        float(i) for i in range(30, 130)
    ]


def test_tag_trial_and_file_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deep" / "er" / "m.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_TAG", "val_loss")
    monkeypatch.setenv("CLOUD_ML_TRIAL_ID", "12")
    for name in ("CLUSTER_SPEC", "TF_CONFIG", "RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    report(1.5)
    report(2.5, tag="explicit")
    first, second = read_entries(str(path))
    assert (first["val_loss"], first["trial"]) == ("1.5", "12")
    assert second["explicit"] == "2.5" and "val_loss" not in second


def test_defaults_match_cloudml_hypertune(tmp_path: Path) -> None:
    path = tmp_path / "m.metrics"
    report(1, environ={"CLOUD_ML_HP_METRIC_FILE": str(path)})
    (entry,) = read_entries(str(path))
    assert entry["training/hptuning/metric"] == "1.0"
    assert (entry["trial"], entry["global_step"], entry["checkpoint_path"]) == ("0", "0", "")


def test_only_the_chief_writes_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "m.metrics"
    worker = {"CLOUD_ML_HP_METRIC_FILE": str(path), "CLUSTER_SPEC": WORKER_SPEC}
    assert report(1.0, environ=worker) is False
    assert not path.exists()
    assert report(2.0, environ=worker, all_replicas=True) is True
    assert report(3.0, environ={**worker, "CLUSTER_SPEC": CHIEF_SPEC}) is True
    assert [e["training/hptuning/metric"] for e in read_entries(str(path))] == ["2.0", "3.0"]


def test_a_bare_file_name_is_written_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report(4.0, "loss", environ={"CLOUD_ML_HP_METRIC_FILE": "bare.metrics"})
    assert read_like_the_service(tmp_path / "bare.metrics", "loss")[0]["loss"] == 4.0
    assert sorted(os.listdir(tmp_path)) == ["bare.metrics"], "no temp file is left behind"


@pytest.mark.parametrize("when", ["before the first report", "between reports"])
def test_refuses_to_write_through_a_symlink(tmp_path: Path, when: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    path = tmp_path / "m.metrics"
    env = {"CLOUD_ML_HP_METRIC_FILE": str(path)}
    if when == "between reports":
        report(1.0, environ=env)
        path.unlink()
    path.symlink_to(victim)
    with pytest.raises(StorageError, match="m.metrics: refusing to write through a symlink"):
        report(2.0, environ=env)
    assert victim.read_text() == "precious\n"
    assert path.is_symlink()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"value": "high"}, r"report: value: the metric is not a number \(got 'high'\)"),
        ({"value": None}, r"value: the metric is not a number"),
        ({"value": 1.0, "tag": "trial"}, r"report: tag: the tag cannot be used \(got 'trial'\)"),
        ({"value": 1.0, "tag": "timestamp"}, r"tag: the tag cannot be used"),
        ({"value": 1.0, "step": "ten"}, r"report: step: the step is not an integer \(got 'ten'\)"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        report(**kwargs, environ={"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "m")})
    assert not (tmp_path / "m").exists()


STARTER = """
import os, sys, time
from vtrain.hypertune import report
go, index = sys.argv[1], sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.001)
for step in range(25):
    report(float(index), "loss", step, all_replicas=True)
"""


def test_eight_processes_starting_at_once(tmp_path: Path) -> None:
    # All eight create the same new folders and replace the same file while this test
    # reads it: every read must be a whole file of whole lines (cloudml-hypertune
    # truncates in place, so its readers see empty and half-written files).
    path = tmp_path / "a" / "b" / "m.metrics"
    go = tmp_path / "go"
    env = {**os.environ, "CLOUD_ML_HP_METRIC_FILE": str(path), "CLOUD_ML_TRIAL_ID": "1"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(go), str(i)], env=env, stderr=subprocess.PIPE
        )
        for i in range(8)
    ]
    time.sleep(0.5)  # let the interpreters reach the starting line
    go.touch()
    reads = 0
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in processes) or reads == 0:
        assert time.monotonic() < deadline, "the reporters never wrote the metric file"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        reads += 1
        assert data.endswith(b"\n")
        for line in data.splitlines():
            assert set(json.loads(line)) == {
                "checkpoint_path",
                "global_step",
                "loss",
                "timestamp",
                "trial",
            }
    errors = [p.communicate()[1].decode() for p in processes]
    assert [p.returncode for p in processes] == [0] * 8, errors
    # Each process keeps its own last 100 and the last writer wins, as with
    # cloudml-hypertune: the file holds at least that writer's 25, all whole.
    entries = read_like_the_service(path, "loss")
    assert 25 <= len(entries) <= 100
    assert sorted(os.listdir(path.parent)) == ["m.metrics"], "no temp file is left behind"
