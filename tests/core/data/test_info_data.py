"""`vtrain info --data`: the dataset variables, each split's file count or BigQuery table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from data_files import write_split

from vtrain.cli.info import describe


def test_info_data_counts_each_splits_files(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 3)
    env = {
        "AIP_TRAINING_DATA_URI": str(tmp_path / "d" / "training-*"),
        "AIP_VALIDATION_DATA_URI": str(tmp_path / "none-*"),
        "AIP_DATA_FORMAT": "jsonl",
    }
    data = describe(env, data=True)["data"]
    assert data["format"] == "jsonl"
    assert data["splits"]["training"]["files"] == 3
    assert data["splits"]["validation"]["files"] == 0
    assert data["splits"]["test"] == {"variable": "AIP_TEST_DATA_URI", "uri": None}
    assert "data" not in describe(env)  # listing a bucket costs a request: only when asked


def test_info_data_prints_counts_and_bigquery_errors(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 2)
    env = {
        "PATH": "",
        "AIP_TRAINING_DATA_URI": str(tmp_path / "d" / "*"),
        "AIP_VALIDATION_DATA_URI": "bq://p.d.t",
        "AIP_TEST_DATA_URI": "bq://my-project.d.t",
    }
    run = [sys.executable, "-m", "vtrain", "info", "--data"]
    done = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert f"  training         {tmp_path}/d/*  (2 files)" in done.stdout
    assert "validation       bq://p.d.t  [AIP_VALIDATION_DATA_URI: not a project id" in done.stdout
    shown = "test             bq://my-project.d.t  (BigQuery table projects/my-project/"
    assert shown + "datasets/d/tables/t)" in done.stdout
    done = subprocess.run([*run, "--json"], env=env, capture_output=True, text=True, check=True)
    splits = json.loads(done.stdout)["data"]["splits"]
    assert splits["training"]["files"] == 2
    assert splits["test"]["table"] == "projects/my-project/datasets/d/tables/t"
