"""Where `vtrain tune` writes by default, one folder per study file, and what it says at its end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tune_helpers import OBJECTIVE, study

from vtrain.cli import main
from vtrain.cli.tune import default_output_dir


@pytest.mark.parametrize(
    ("study_file", "expected"),
    [
        ("study.yaml", "vtrain-output/tune/study-yaml"),
        ("study.json", "vtrain-output/tune/study-json"),
        ("examples/pytorch/study.yaml", "vtrain-output/tune/examples/pytorch/study-yaml"),
        ("examples/keras/study.yaml", "vtrain-output/tune/examples/keras/study-yaml"),
        ("plain", "vtrain-output/tune/plain"),
        ("/elsewhere/s.yml", "vtrain-output/tune/elsewhere/s-yml"),
    ],
)
def test_each_study_file_has_a_folder_of_its_own(
    study_file: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert default_output_dir(study_file, {}) == expected
    assert default_output_dir(study_file, {"VTRAIN_OUTPUT_DIR": "/o"}) == "/o" + expected[13:]


def test_a_yaml_and_a_json_study_side_by_side_both_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # They used to share vtrain-output/study: the second one's search space was refused.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VTRAIN_OUTPUT_DIR", raising=False)
    records = tmp_path / "records"
    records.mkdir()
    spaces = {"yaml": {"min_value": 0, "max_value": 1}, "json": {"min_value": 0, "max_value": 0.5}}
    for suffix, space in spaces.items():
        document = study(
            parameters=[{"parameter_id": "x", "double_value_spec": space}], max_trial_count=2
        )
        # JSON is YAML: the .yaml file needs no converter of its own.
        (tmp_path / f"study.{suffix}").write_text(json.dumps(document))
        argv = ["tune", "--study", f"study.{suffix}", "--", sys.executable, OBJECTIVE]
        assert main([*argv, "--records", str(records)]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        folder = f"vtrain-output/tune/study-{suffix}"
        assert json.loads((tmp_path / folder / "study.json").read_text())["status"] == "SUCCEEDED"
        # The end says where the best trial's outputs are; the trials wrote no TensorBoard
        # events, so no line offers to show them.
        tail = out.splitlines()[-5:]
        assert tail[0].startswith("outputs of the best trial, ")
        best = tail[0].removeprefix("outputs of the best trial, ").rstrip(":")
        assert tail[1].split() == ["model", f"{folder}/{best}/model/", "(empty)"]
        metric = f"{folder}/{best}/hypertune/chief-0.metrics"
        assert tail[4].split() == ["tuning", "metric", metric]
        assert "tensorboard --logdir" not in out
