"""`vtrain tune` run again, as the user types it: the same study, another command, another study.

Each test types `python -m vtrain tune --study study.json -- python objective.py ...` in a
folder of its own, so the study lands in the default vtrain-output/tune/study-json/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from tune_helpers import OBJECTIVE, study

from vtrain.errors import UsageError
from vtrain.tune.rerun import set_aside, settle
from vtrain.tune.results import write_results
from vtrain.tune.runner import Replicas
from vtrain.tune.study_file import study_from_document

FOLDER = Path("vtrain-output", "tune", "study-json")


def tune(
    tmp_path: Path, *options: str, extra: tuple[str, ...] = (), max_trials: int = 1
) -> subprocess.CompletedProcess[str]:
    """`vtrain tune --study study.json OPTIONS -- python objective.py --records R EXTRA`."""
    (tmp_path / "study.json").write_text(json.dumps(study(max_trial_count=max_trials)))
    records = tmp_path / "records"
    records.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "VTRAIN_OUTPUT_DIR"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "tune",
            "--study",
            "study.json",
            *options,
            "--",
            sys.executable,
            OBJECTIVE,
            "--records",
            "records",
            *extra,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def trials(tmp_path: Path, folder: Path = FOLDER) -> list[dict[str, object]]:
    return list(json.loads((tmp_path / folder / "study.json").read_text())["trials"])


def argv_of(tmp_path: Path, trial: str) -> list[list[str]]:
    """The arguments each process of `trial` was started with."""
    found = (json.loads(p.read_text()) for p in (tmp_path / "records").glob(f"{trial}-*.json"))
    return [r["argv"] for r in found]


def test_another_command_is_refused_with_both_commands_and_the_choice(tmp_path: Path) -> None:
    first = tune(tmp_path)
    assert first.returncode == 0, first.stderr
    before = trials(tmp_path)
    # Before: 0.3 s later, the old table, as if it were this command's.
    again = tune(tmp_path, extra=("--sleep", "0"))
    assert again.returncode == 2, again.stderr
    assert again.stdout == ""  # no table stands for a command that never ran
    (line,) = again.stderr.splitlines()
    old = f"{sys.executable} {OBJECTIVE} --records records"
    assert line.startswith(
        f"vtrain tune: error: {FOLDER}: this folder holds another study: it ran `{old}`, "
        f"not `{old} --sleep 0`. Hint: add --resume to go on with that study as it was run, "
        f"or --new-study to start a new one here (that one is then kept in {FOLDER}.1)"
    ), line
    assert trials(tmp_path) == before


def test_the_same_command_again_says_the_study_is_done_and_runs_nothing(tmp_path: Path) -> None:
    assert tune(tmp_path).returncode == 0
    again = tune(tmp_path)
    assert again.returncode == 0, again.stderr
    assert "has run all 1 trials; its results follow (--new-study runs it again" in again.stderr
    assert "best trial: 1" in again.stdout
    assert len(argv_of(tmp_path, "1")) == 1  # trial 1 ran once, in the first run


def test_resume_goes_on_with_the_command_the_study_ran(tmp_path: Path) -> None:
    assert tune(tmp_path).returncode == 0
    # A larger max_trial_count adds a trial; --resume runs it with the study's own command.
    resumed = tune(tmp_path, "--resume", extra=("--sleep", "0"), max_trials=2)
    assert resumed.returncode == 0, resumed.stderr
    assert f"vtrain tune: resuming the study in {FOLDER} as run: it ran `" in resumed.stderr
    assert "resuming the study in" in resumed.stderr and "1 of 2 trials finished" in resumed.stderr
    (argv,) = argv_of(tmp_path, "2")
    assert "--sleep" not in argv and argv[:2] == ["--records", "records"]
    assert [t["status"] for t in trials(tmp_path)] == ["SUCCEEDED", "SUCCEEDED"]


def test_new_study_keeps_the_old_one_and_runs_the_new_command(tmp_path: Path) -> None:
    assert tune(tmp_path).returncode == 0
    old = trials(tmp_path)
    new = tune(tmp_path, "--new-study", extra=("--sleep", "0"))
    assert new.returncode == 0, new.stderr
    assert f"vtrain tune: a new study; the earlier one is kept in {FOLDER}.1" in new.stderr
    assert trials(tmp_path, Path(f"{FOLDER}.1")) == old
    assert len(trials(tmp_path)) == 1
    assert sorted("--sleep" in argv for argv in argv_of(tmp_path, "1")) == [False, True]
    # The new study is the folder's now: the same command again resumes it, no flag needed.
    again = tune(tmp_path, extra=("--sleep", "0"))
    assert again.returncode == 0, again.stderr
    assert "has run all 1 trials" in again.stderr


def test_a_changed_search_space_is_refused_and_resume_keeps_the_recorded_one(
    tmp_path: Path,
) -> None:
    assert tune(tmp_path).returncode == 0
    (tmp_path / "narrow.json").write_text(
        json.dumps(
            study(
                parameters=[{"parameter_id": "x", "discrete_value_spec": {"values": [2]}}],
                max_trial_count=2,
            )
        )
    )
    typed = [
        sys.executable,
        "-m",
        "vtrain",
        "tune",
        "--study",
        "narrow.json",
        "--output-dir",
        str(FOLDER),
        "--",
        sys.executable,
        OBJECTIVE,
        "--records",
        "records",
    ]
    refused = subprocess.run(typed, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert "this folder holds another study: its metric, search space or algorithm differ" in (
        refused.stderr
    )
    typed.insert(-5, "--resume")
    resumed = subprocess.run(typed, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    # The recorded study, whole: its x in [0, 1] and its single trial, not the file's x = 2.
    assert [t["parameters"]["x"] != 2 for t in trials(tmp_path)] == [True]


def test_resume_with_nothing_to_resume_is_refused(tmp_path: Path) -> None:
    done = tune(tmp_path, "--resume")
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"vtrain tune: error: {FOLDER}: there is no study here to resume. Hint: run it without "
        "--resume to start it"
    ), done.stderr


def test_resume_needs_no_command(tmp_path: Path) -> None:
    assert tune(tmp_path).returncode == 0
    typed = [sys.executable, "-m", "vtrain", "tune", "--study", "study.json", "--resume"]
    done = subprocess.run(typed, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "best trial: 1" in done.stdout


def test_a_folder_with_other_things_in_it_is_not_moved_aside(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text("{}")
    (tmp_path / "1").mkdir()
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match=r"holds other things too \(got \['notes.txt'\]"):
        set_aside(str(tmp_path))
    assert (tmp_path / "notes.txt").exists()
    (tmp_path / "notes.txt").unlink()
    assert set_aside(str(tmp_path)) == f"{tmp_path}.1"


ARGS = st.lists(st.sampled_from(["python", "t.py", "--steps", "5", "--x=1", "a b", ""]), max_size=4)
REPLICAS = st.builds(Replicas, st.integers(0, 2), st.integers(0, 1), st.integers(0, 1))


@examples(200)
@given(old=ARGS, new=ARGS, old_replicas=REPLICAS, new_replicas=REPLICAS, seed=st.integers(0, 9))
def test_a_rerun_never_runs_another_command_on_the_study_unasked(
    tmp_path_factory: pytest.TempPathFactory,
    old: list[str],
    new: list[str],
    old_replicas: Replicas,
    new_replicas: Replicas,
    seed: int,
) -> None:
    # The class of defects: results on record shown, or extended, for a command that differs.
    folder = str(tmp_path_factory.mktemp("study"))
    the_study = study_from_document(study())
    write_results(
        os.path.join(folder, "study.json"),
        study=the_study,
        command=["python", *old],
        seed=7,
        replicas=asdict(old_replicas),
        output_dir=folder,
        status="SUCCEEDED",
        reason="",
        trials=[],
        best=None,
    )
    command = ["python", *new]
    same = (old, old_replicas) == (new, new_replicas)
    if same:
        settled = settle(folder, the_study, command, new_replicas, seed)
        assert (settled.command, settled.replicas, settled.seed) == (
            tuple(command),
            new_replicas,
            seed,
        )
    else:
        with pytest.raises(UsageError, match="this folder holds another study: it ran `python"):
            settle(folder, the_study, command, new_replicas, seed)
    resumed = settle(folder, the_study, command, new_replicas, seed, resume=True)
    assert (resumed.command, resumed.replicas, resumed.seed) == (("python", *old), old_replicas, 7)
    assert resumed.recorded is not None and (resumed.notes != ()) is not same
    fresh = settle(folder, the_study, command, new_replicas, seed, new_study=True)
    assert (fresh.command, fresh.recorded, fresh.set_aside) == (tuple(command), None, True)
