"""Properties of step folder names and of the name checks (hypothesis)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.checkpoints.layout import MAX_STEP, parse_step_folder, step_folder
from vtrain.errors import StorageError
from vtrain.storage import LocalLocation, check_name

steps = st.integers(min_value=0, max_value=MAX_STEP)


@examples(100)
@given(steps)
def test_step_folders_round_trip(step: int) -> None:
    assert parse_step_folder(step_folder(step)) == step


@examples(100)
@given(steps, steps)
def test_name_order_is_step_order(a: int, b: int) -> None:
    assert (step_folder(a) < step_folder(b)) == (a < b)


@examples(100)
@given(st.text(alphabet=st.sampled_from("ab./\\\x00 -_"), max_size=12))
def test_a_checked_name_never_leaves_its_folder(name: str) -> None:
    root = "/base/ckpt"
    try:
        check_name(name, where=root)
    except StorageError:
        return
    full = LocalLocation(root).full(name)
    assert os.path.commonpath([root, os.path.normpath(full)]) == root
    assert os.path.normpath(full) != root


def test_trial_ids_from_the_environment_cannot_escape(tmp_path: Path) -> None:
    from vtrain.checkpoints import CheckpointManager
    from vtrain.errors import ConfigError

    for bad in ("../../etc", "a/b", "..", ".hidden/x"):
        with pytest.raises(ConfigError, match="CLOUD_ML_TRIAL_ID: trial id is not a plain folder"):
            CheckpointManager(tmp_path, is_leader=True, environ={"CLOUD_ML_TRIAL_ID": bad})


def test_only_ascii_digits_make_a_step_folder() -> None:
    assert parse_step_folder("step-00000000000\u0661") is None  # ARABIC-INDIC DIGIT ONE
    assert parse_step_folder("step-000000000001") == 1
