"""`vtrain tune` end to end: real trials of a tiny script that maximises a known function."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tune_helpers import OBJECTIVE, Tune, study

from vtrain.cli import main
from vtrain.errors import UsageError


def flags(record: dict[str, object]) -> dict[str, str]:
    """The --name=value flags a trial received."""
    argv = record["argv"]
    assert isinstance(argv, list)
    return dict(a[2:].split("=", 1) for a in argv if "=" in a)


def test_grid_search_runs_exactly_the_grid(tune: Tune) -> None:
    document = study(
        parameters=[
            {"parameter_id": "y", "integer_value_spec": {"min_value": 0, "max_value": 2}},
            {"parameter_id": "opt", "categorical_value_spec": {"values": ["adam", "sgd"]}},
        ],
        algorithm="GRID_SEARCH",
        max_trial_count=10,
        parallel_trial_count=3,
    )
    run = tune(document)
    assert run.status == 0, run.err
    seen = sorted((f["y"], f["opt"]) for f in map(flags, run.records()))
    assert seen == sorted(itertools.product(["0", "1", "2"], ["adam", "sgd"]))
    assert [t["trial_id"] for t in run.trials] == ["1", "2", "3", "4", "5", "6"]
    assert {t["status"] for t in run.trials} == {"SUCCEEDED"}
    assert "[6/6] trial" in run.err
    assert run.results["best_trial"] in {
        t["trial_id"] for t in run.trials if t["parameters"]["y"] == 1
    }


def test_random_search_over_20_trials_finds_the_peak(tune: Tune) -> None:
    run = tune(study(max_trial_count=20, parallel_trial_count=4), cli=("--seed", "3"))
    assert run.status == 0, run.err
    assert len(run.records()) == 20
    finals = {t["trial_id"]: t["final_metric"] for t in run.trials}
    best = run.results["best_trial"]
    assert finals[best] == max(finals.values())
    # f peaks at 0 (x = 0.3); 20 uniform draws miss |x - 0.3| < 0.1 with probability 1.2 %.
    assert finals[best] > -0.01
    # The last report wins (LAST_MEASUREMENT), not the earlier, worse one.
    x = run.trials[0]["parameters"]["x"]
    assert run.trials[0]["final_metric"] == pytest.approx(-((x - 0.3) ** 2))
    assert f"best trial: {best}  score=" in run.out
    assert run.out.splitlines()[0].split() == ["trial", "x", "score", "status", "duration"]
    assert "[20/20] trial" in run.err


def test_failed_trials_are_counted_and_stop_the_study_at_the_limit(tune: Tune) -> None:
    document = study(
        parameters=[
            {"parameter_id": "x", "discrete_value_spec": {"values": [0.1, 0.6, 0.7, 0.8, 0.9]}}
        ],
        algorithm="GRID_SEARCH",
        max_trial_count=5,
        max_failed_trial_count=2,
    )
    run = tune(document, "--fail-above", "0.5")
    assert run.status == 1
    assert [(t["trial_id"], t["status"], t["reason"]) for t in run.trials] == [
        ("1", "SUCCEEDED", ""),
        ("2", "FAILED", "exit status 3"),
        ("3", "FAILED", "exit status 3"),
    ]
    assert run.results["status"] == "FAILED"
    assert "2 trials failed (max_failed_trial_count is 2)" in run.out
    assert len(list(run.records_dir.glob("started-*"))) == 3, "no trial started after the limit"


def test_a_trial_that_reports_nothing_fails(tune: Tune) -> None:
    run = tune(study(max_trial_count=1), "--tag", "other")
    assert run.status == 1
    assert run.trials[0]["status"] == "FAILED"
    # The metric_id and the script's tag differ: the reason shows both, so the typo shows.
    assert run.trials[0]["reason"] == "reported no 'score' metric; it reported 'other'"


@pytest.mark.parametrize(
    ("selection", "offset"), [("LAST_MEASUREMENT", 0.0), ("BEST_MEASUREMENT", -1.0)]
)
def test_measurement_selection(tune: Tune, selection: str, offset: float) -> None:
    document = study(
        metrics=[{"metric_id": "score", "goal": "MINIMIZE"}],
        measurement_selection_type=selection,
        parameters=[{"parameter_id": "x", "discrete_value_spec": {"values": [0.5]}}],
        max_trial_count=1,
    )
    run = tune(document)
    assert run.trials[0]["final_metric"] == pytest.approx(-0.04 + offset)


def test_parallel_trials_never_share_a_metric_file_or_folder(tune: Tune) -> None:
    run = tune(study(max_trial_count=8, parallel_trial_count=4), "--sleep", "0.3")
    assert run.status == 0, run.err
    records = run.records()
    assert sorted(r["trial"] for r in records) == [str(i) for i in range(1, 9)]
    for key in ("metric_file", "model_dir", "checkpoint_dir", "tensorboard_dir", "pid"):
        assert len({r[key] for r in records}) == 8, key
    for r in records:
        folder = run.output_dir.resolve() / r["trial"]
        assert r["model_dir"] == f"{folder}/model/"
        assert r["checkpoint_dir"] == f"{folder}/checkpoints/"
        assert r["tensorboard_dir"] == f"{folder}/logs/"
        assert Path(r["metric_file"]).parent.parent == folder
        assert json.loads(r["cluster_spec"])["task"] == {
            "type": "workerpool0",
            "index": 0,
            "trial": r["trial"],
        }
        lines = Path(r["metric_file"]).read_text().splitlines()
        assert {json.loads(line)["trial"] for line in lines} == {r["trial"]}
    # They did run side by side: some trial started before another one ended.
    spans = sorted((r["started"], r["ended"]) for r in records)
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:], strict=False))


def test_resume_runs_only_the_trials_not_yet_finished(tune: Tune) -> None:
    first = tune(study(max_trial_count=3))
    assert first.status == 0, first.err
    second = tune(study(max_trial_count=5))
    assert second.status == 0, second.err
    ran = sorted(r["trial"] for r in second.records())
    assert ran == ["1", "2", "3", "4", "5"], "trials 1-3 ran once, in the first run"
    assert [t["parameters"] for t in second.trials[:3]] == [t["parameters"] for t in first.trials]


def test_resume_after_an_interruption_reruns_the_interrupted_trials(tmp_path: Path) -> None:
    records, out, go = tmp_path / "records", tmp_path / "out", tmp_path / "go"
    records.mkdir()
    study_file = tmp_path / "s.json"

    def command(max_trials: int, *extra: str) -> list[str]:
        study_file.write_text(json.dumps(study(max_trial_count=max_trials, parallel_trial_count=2)))
        return [
            sys.executable,
            "-m",
            "vtrain",
            "tune",
            "--study",
            str(study_file),
            "--output-dir",
            str(out),
            "--",
            sys.executable,
            OBJECTIVE,
            "--records",
            str(records),
            *extra,
        ]

    # One command throughout: a rerun with another one is refused (test_tune_rerun.py).
    go.touch()
    subprocess.run(command(2, "--wait-for", str(go)), check=True, capture_output=True)
    go.unlink()
    tuner = subprocess.Popen(command(4, "--wait-for", str(go)), stderr=subprocess.PIPE, text=True)
    # Generous limits: every record and study.json change is fsynced, which a busy disk
    # can stretch to many seconds.
    deadline = time.monotonic() + 180
    while len(list(records.glob("started-*"))) < 4 and time.monotonic() < deadline:
        if tuner.poll() is not None:
            break  # it ended by itself: the assertion below says how
        time.sleep(0.05)
    tuner.send_signal(signal.SIGINT)
    assert tuner.wait(180) == 130, tuner.stderr.read() if tuner.stderr else ""
    said = tuner.stderr.read() if tuner.stderr else ""
    assert (
        "vtrain tune: stopped by Ctrl-C (SIGINT); trials 3, 4 stopped. Run the same command "
        f"again to resume the study in {out}: finished trials are kept, stopped ones run again."
    ) in said, said
    state = json.loads((out / "study.json").read_text())
    assert [(t["trial_id"], t["status"]) for t in state["trials"]] == [
        ("1", "SUCCEEDED"),
        ("2", "SUCCEEDED"),
        ("3", "STOPPED"),
        ("4", "STOPPED"),
    ]
    blocked = [int(p.name.split("-")[2]) for p in records.glob("started-[34]-*")]
    for pid in blocked:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    go.touch()
    subprocess.run(command(4, "--wait-for", str(go)), check=True, capture_output=True)
    ran = sorted(r["trial"] for r in (json.loads(p.read_text()) for p in records.glob("*.json")))
    assert ran == ["1", "2", "3", "4"]
    state = json.loads((out / "study.json").read_text())
    assert [t["status"] for t in state["trials"]] == ["SUCCEEDED"] * 4


def test_resume_refuses_a_different_search_space(tune: Tune) -> None:
    tune(study(max_trial_count=1))
    changed = study(
        max_trial_count=2,
        algorithm="GRID_SEARCH",
        parameters=[{"parameter_id": "x", "discrete_value_spec": {"values": [0.1]}}],
    )
    run = tune(changed)
    assert run.status == 2
    assert (
        "this folder holds another study: its metric, search space or algorithm differ from "
        "the study file's. Hint: add --resume" in run.err
    )
    # The runner itself refuses it too, for a caller that skips the command's check.
    from vtrain.tune.results import read_trials
    from vtrain.tune.study_file import study_from_document

    with pytest.raises(UsageError, match="holds a study with a different metric, search space"):
        read_trials(str(run.output_dir / "study.json"), study_from_document(changed))


def test_model_based_search_runs_and_resumes(tune: Tune) -> None:
    pytest.importorskip("optuna")
    document = study(algorithm="ALGORITHM_UNSPECIFIED", max_trial_count=3, parallel_trial_count=2)
    assert tune(document).status == 0
    run = tune({**document, "max_trial_count": 5})
    assert run.status == 0, run.err
    assert sorted(r["trial"] for r in run.records()) == ["1", "2", "3", "4", "5"]
    assert all(0 <= t["parameters"]["x"] <= 1 for t in run.trials)


def test_malformed_study_file_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(
        "metrics: [{metric_id: s, goal: MAXIMIZE}]\nmax_trial_count: 2\nparameters:\n"
        "  - parameter_id: x\n"
        "    double_value_spec: {min_value: 0, max_value: 1}\n"
        "    scale_type: CUBIC\n"
    )
    assert main(["tune", "--study", str(path), "--", sys.executable, "-c", "pass"]) == 2
    err = capsys.readouterr().err
    assert (
        f"vtrain tune: error: {path}: parameters[0].scale_type: unknown scale (got 'CUBIC')" in err
    )


@pytest.mark.parametrize(
    ("command", "match"),
    [
        ([], "no command to run"),
        (["no-such-program-here"], "COMMAND: command not found (got 'no-such-program-here')"),
    ],
)
def test_bad_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], match: str
) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(study()))
    assert (
        main(["tune", "--study", str(path), "--output-dir", str(tmp_path / "o"), "--", *command])
        == 2
    )
    assert match in capsys.readouterr().err


def test_trials_as_a_local_cluster(tune: Tune) -> None:
    if not Path(__file__).parents[3].joinpath("core", "vtrain", "cli", "local.py").exists():
        pytest.skip("vtrain local run is not there yet")
    # `vtrain local run` does not pass CLOUD_ML_HP_METRIC_TAG on, so the script names its tag.
    run = tune(
        study(max_trial_count=2, parallel_trial_count=2), "--tag", "score", cli=("--workers", "1")
    )
    assert run.status == 0, run.err + "".join(
        (run.output_dir / t["trial_id"] / "trial.log").read_text() for t in run.trials
    )
    # Only the chief is sure to write its record: the job ends, and the worker is
    # stopped, as soon as the chief exits.
    chiefs = [
        r for r in run.records() if json.loads(r["cluster_spec"])["task"]["type"] == "workerpool0"
    ]
    assert sorted(r["trial"] for r in chiefs) == ["1", "2"]
    for r in chiefs:
        cluster_spec = json.loads(r["cluster_spec"])
        assert sorted(cluster_spec["cluster"]) == ["workerpool0", "workerpool1"]
        assert cluster_spec["task"]["trial"] == r["trial"]
    for t in run.trials:
        x = t["parameters"]["x"]
        assert t["final_metric"] == pytest.approx(-((x - 0.3) ** 2))


def test_a_command_that_cannot_start_stops_the_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad-interpreter"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(study()))
    argv = ["tune", "--study", str(path), "--output-dir", str(tmp_path / "o"), "--", str(script)]
    assert main(argv) == 2
    assert "COMMAND: cannot start trial 1: No such file or directory" in capsys.readouterr().err


def test_ctrl_c_stops_a_study_started_with_sigint_ignored(tmp_path: Path) -> None:
    # A shell without job control (a CI script's `cmd &`) starts commands with SIGINT
    # ignored; Python then never raises KeyboardInterrupt unless vtrain sets a handler.
    records, go, study_file = tmp_path / "records", tmp_path / "go", tmp_path / "s.json"
    records.mkdir()
    study_file.write_text(json.dumps(study(max_trial_count=1)))
    tuner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vtrain",
            "tune",
            "--study",
            str(study_file),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            OBJECTIVE,
            "--records",
            str(records),
            "--wait-for",
            str(go),
        ],
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    deadline = time.monotonic() + 180
    while not list(records.glob("started-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    tuner.send_signal(signal.SIGINT)
    try:
        assert tuner.wait(180) == 130
    finally:
        tuner.kill()
        go.touch()
    state = json.loads((tmp_path / "out" / "study.json").read_text())
    assert [t["status"] for t in state["trials"]] == ["STOPPED"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "metrics:\n  - metric_id: loss\n    goal: [MINIMIZE\nparameters: []\n",
            "not valid YAML: expected ',' or ']', but got ':' at line 4, column 11: "
            "'parameters: []'",
        ),
        (
            "a: b: c\n",
            "not valid YAML: mapping values are not allowed here at line 1, column 5: 'a: b: c'",
        ),
    ],
)
def test_a_yaml_mistake_is_shown_where_it_is_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(text)
    assert main(["tune", "--study", str(path), "--", "true"]) == 2
    err = capsys.readouterr().err
    assert err == f"vtrain tune: error: {path}: {said}\n", err
    assert "<unicode string>" not in err and "\\n" not in err
