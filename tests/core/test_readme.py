"""The README's framework-free command blocks run as written; every block says where it runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from readme_blocks import BENCH, COMMANDS, ROOT, SESSIONS, Block, blocks, blocks_for, run_block

from vtrain.tune.study_file import parse_study, read_study


def test_every_command_block_says_which_session_runs_it() -> None:
    commands = [b for b in blocks() if b.language in COMMANDS]
    assert len(commands) >= 10
    unmarked = [
        str(b)
        for b in commands
        if b.marker not in (*SESSIONS, BENCH)
        and not (b.marker or "").startswith(("skip (", "same as "))
    ]
    assert not unmarked, "add <!-- readme-test: SESSION --> above these blocks"
    assert {b.session for b in commands} >= set(SESSIONS)


def test_the_docs_pages_hold_blocks_the_sessions_run() -> None:
    # The machinery reads docs/ too: a page's block is a block tested.
    pages = {b.page.split("/")[0] for b in blocks() if b.session is not None}
    assert pages == {"README.md", "docs"}, pages


@pytest.mark.parametrize("block", [b for b in blocks() if b.marker == BENCH], ids=str)
def test_each_benchmark_block_names_a_script_and_flags_it_takes(block: Block) -> None:
    # A benchmark takes minutes of a whole machine, and is run by hand: its block must at
    # least name a script of bench/ and only flags that script's parser declares.
    lines = [line for line in block.text.splitlines() if line.strip()]
    assert lines, block
    for line in lines:
        found = re.match(
            r"(?:\w+=\S+ )*(?:\.nox/[\w(),=' -]+/bin/)?python (bench/\w+\.py)((?: .*)?)$", line
        )
        assert found, (str(block), line)
        script = (ROOT / found[1]).read_text()
        for flag in re.findall(r"(?:^| )(--[\w-]+)", found[2]):
            assert f'"{flag}"' in script, (str(block), found[1], flag)


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
        assert "outputs of this job:\n  model " in done.stdout
        assert "vtrain-output/local/" in done.stdout.split("outputs of this job:")[1]


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


# Each block tagged `skip` and the test that types its commands with what runs here.
TWINS = {
    "git clone REPOSITORY_URL vtrain": (
        "tests/core/test_readme.py",
        "test_a_clone_has_every_file_the_readme_commands_use",
    ),
    'pip install "nox>=2026.10.20" && nox': (
        "tests/core/test_readme.py",
        "test_ci_runs_the_readme_test_command",
    ),
    "vtrain local run --job job.yaml": (
        "tests/submit/test_readme_twins.py",
        "test_the_rehearse_then_submit_block",
    ),
    "vtrain local run --job quickstart.yaml": (
        "tests/submit/test_readme_twins.py",
        "test_the_quickstart_block_renders_rehearses_and_submits",
    ),
    "vtrain local run --job spot.yaml --kill": (
        "tests/submit/test_readme_twins.py",
        "test_the_spot_block_rehearses_a_reclaim_that_commits_and_resumes",
    ),
    'vtrain.plugins.get("tensorflow").configure()': (
        "tests/core/test_readme.py",
        "test_the_keras_lines_are_the_keras_example_s",
    ),
}


def _skipped() -> list[Block]:
    return [b for b in blocks() if (b.marker or "").startswith("skip (")]


def test_every_skipped_block_has_a_runnable_twin() -> None:
    skipped = _skipped()
    assert len(skipped) == len(TWINS), [str(b) for b in skipped]
    for phrase, (path, name) in TWINS.items():
        holding = [b for b in skipped if phrase in b.text]
        assert len(holding) == 1, (phrase, [str(b) for b in holding])
        assert f"\ndef {name}(" in (ROOT / path).read_text(), (path, name)
        assert path.rsplit("/", 1)[0] in holding[0].marker, "the skip tag names where its twin is"


def _readme_paths() -> set[str]:
    """The repository files that the README's command blocks name."""
    commands = [b for b in blocks() if b.language in COMMANDS]
    return {p for b in commands for p in re.findall(r"\b(?:examples|tests)/[\w./-]*\w", b.text)}


def test_a_clone_has_every_file_the_readme_commands_use(tmp_path: Path) -> None:
    (block,) = [b for b in _skipped() if "git clone" in b.text]
    paths = _readme_paths()
    assert {"tests/constraints.txt", "examples/pytorch/train.py"} <= paths
    # The block as typed, from this repository; then what the next blocks need, in the clone.
    checks = "".join(f"test -e {p}\n" for p in sorted(paths))
    script = block.text.replace("REPOSITORY_URL", str(ROOT)) + checks + "test -f pyproject.toml\n"
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_ci_runs_the_readme_test_command() -> None:
    (block,) = [b for b in _skipped() if "nox" in b.text]
    assert block.text == 'pip install "nox>=2026.10.20" && nox\n'
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    # The same nox (the noxfile's needs_version), and the default sessions, as `nox` runs them.
    assert ci[-3] == 'python3 -m pip install --quiet "nox>=2026.10.20"', ci[-3]
    assert ci[-2] == "python3 -m nox", "CI runs the default sessions, as `nox` does"
    assert ci[-1] == "python3 -m nox -s faults --parallel 2", "then the whole fault matrix"


def test_the_keras_lines_are_the_keras_example_s() -> None:
    # The example runs in the tensorflow session (the blocks that name it); these lines are its.
    (block,) = [b for b in _skipped() if "tensorflow" in b.text]
    example = (ROOT / "examples" / "keras" / "train.py").read_text()
    calls = re.findall(r"(?:handle|vtrain)\.[\w.]+\(", block.text)
    assert len(calls) >= 5, calls
    for call in calls:
        assert call in example, call
    assert any("examples/keras/train.py" in b.text for b in blocks_for("tensorflow"))


def test_the_pip_lines_install_what_their_session_has(tmp_path: Path) -> None:
    # The core session has no XGBoost: a block that installs it belongs to the xgboost session.
    block = Block("bash", 'pip install -c tests/constraints.txt -e ".[xgboost]"\n', None, 0)
    done = run_block(block, tmp_path)
    assert done.returncode != 0
    assert "this session has no xgboost, which vtrain[xgboost] installs" in done.stderr
    tune = Block("bash", 'pip install -c tests/constraints.txt -e ".[tune]"\n', None, 0)
    (tmp_path / "tune").mkdir()
    assert run_block(tune, tmp_path / "tune").returncode == 0


def test_each_framework_has_its_own_install_block() -> None:
    installs = {
        b.session: re.findall(r'-e "\.\[([\w,]+)\]"', b.text)
        for b in blocks()
        if b.text.startswith("pip install") and b.text.count("\n") == 1  # one line: one extra
    }
    assert installs["pytorch"] == ["pytorch,lightning"]
    assert installs["tensorflow"] == ["tensorflow"]
    assert installs["xgboost"] == ["xgboost"]
    assert installs["mxnet"] == ["mxnet"]


def test_mxnet_needs_a_numpy_older_than_tensorflow_takes() -> None:
    # What the README says of MXNet's own venv: its extra pins numpy<1.24, and `all` leaves it out.
    from importlib.metadata import requires

    wanted = requires("vtrain") or []
    extra = r"; extra == [\"'](\w+)[\"']$"
    by_extra = [(r.split(";")[0], m[1]) for r in wanted if (m := re.search(extra, r))]
    assert ("numpy<1.24", "mxnet") in by_extra, wanted
    assert not [r for r, e in by_extra if e == "all" and r.startswith("mxnet")]
    assert [r for r, e in by_extra if e == "all" and r.startswith("xgboost")]  # read as it is


def test_each_example_takes_what_ai_platform_passes() -> None:
    # ml v1 passes the job's jobDir as --job-dir (a rendered config.yaml has one with
    # --output-dir); a script that refused it would end every AI Platform job at once.
    for script in sorted((ROOT / "examples").glob("*/train.py")):
        assert 'parser.add_argument("--job-dir"' in script.read_text(), script
