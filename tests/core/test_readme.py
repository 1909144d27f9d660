"""The README's framework-free command blocks run as written; every block says where it runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from readme_blocks import COMMANDS, ROOT, SESSIONS, Block, blocks, blocks_for, run_block

from vtrain.tune.study_file import parse_study, read_study


def test_every_command_block_says_which_session_runs_it() -> None:
    commands = [b for b in blocks() if b.language in COMMANDS]
    assert len(commands) >= 10
    unmarked = [
        str(b)
        for b in commands
        if b.marker not in SESSIONS and not (b.marker or "").startswith("skip (")
    ]
    assert not unmarked, "add <!-- readme-test: SESSION --> above these blocks"
    assert {b.session for b in commands} >= set(SESSIONS)


def test_a_block_that_shows_a_file_is_that_file() -> None:
    shown = [b for b in blocks() if (b.marker or "").startswith("same as ")]
    assert shown
    for block in shown:
        assert block.text == (ROOT / block.marker.removeprefix("same as ")).read_text(), block


@pytest.mark.parametrize("block", blocks_for("core"), ids=str)
def test_core_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    done = run_block(block, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    if "vtrain local run" in block.text:  # a local job ends with where its outputs are
        assert "tensorboard --logdir vtrain-output/local/" in done.stdout


def test_the_pip_lines_name_extras_that_exist(tmp_path: Path) -> None:
    block = Block("bash", 'pip install -c tests/constraints.txt -e ".[pytorch,nope]"\n', None, 0)
    done = run_block(block, tmp_path)
    assert done.returncode != 0
    assert "vtrain has no extra 'nope'" in done.stderr


def test_the_study_in_tune_help_is_a_valid_study() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "tune", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout.split("JSON):\n", 1)[1].split("\n\n", 1)[0]
    study = parse_study(re.sub(r"(?m)^  ", "", shown), source="vtrain tune --help")
    assert study.algorithm == "RANDOM_SEARCH"
    assert "ALGORITHM_UNSPECIFIED is model-based" in done.stdout
    assert 'report(v, tag="loss")' in done.stdout


@pytest.mark.parametrize("study_file", sorted((ROOT / "examples").glob("*/study.yaml")), ids=str)
def test_each_example_study_names_flags_its_example_takes(study_file: Path) -> None:
    study = read_study(str(study_file))
    script = (study_file.parent / "train.py").read_text()
    for parameter in study.parameters:
        assert f'"--{parameter.parameter_id}"' in script, parameter.parameter_id
    # A script that reports under a tag of its own must be studied under that tag; one that
    # reports without a tag gets the study's (CLOUD_ML_HP_METRIC_TAG).
    tags = re.findall(r'tag="([^"]+)"', script)
    assert not tags or study.metric.metric_id in tags
