"""Every engine's documents: a NUL or a lone surrogate in any string is refused by its path.

Issue 42: `vtrain local run --job kf.yaml` with an env value "\\udcff\\ud800" ended
in a UnicodeEncodeError from the keeper, then "verdict: ready to submit";
`submit kubeflow --job kf.yaml --dry-run` accepted it. The class test puts a
bad string at any string of every kind of document the engines read (the
golden renders of every target, a Katib Experiment, and the study file), as a
value or a key, read from a file and in memory; the command-line tests run the
report, and a flag's byte that is not UTF-8. A job or study file that is a
FIFO, a device or a folder is refused by every command that reads one,
without waiting for a writer.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Result
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from targets import STUDY as STUDY_FILE
from test_job_documents_fuzz import SEEDS

from vtrain.errors import ConfigError
from vtrain.printable import printable
from vtrain.submit.job_file import load_job, read_job
from vtrain.tune.study_file import read_study

Run = Callable[..., Result]
BAD = st.sampled_from(["\0", "\ud800", "\udcff", "\udfff", "\udbff"])
_GOOD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=3)
BAD_TEXT = st.tuples(_GOOD, BAD, _GOOD).map("".join)


def _join(path: str, key: Any) -> str:
    """The dotted path vtrain names: `a.b[0].c`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _strings(value: Any, path: str = "") -> list[tuple[str, Any, Any, bool]]:
    """Every string of a document: (its parent's path, parent, key, the string is the key)."""
    found: list[tuple[str, Any, Any, bool]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((path, value, key, True))
            if isinstance(item, str):
                found.append((path, value, key, False))
            found.extend(_strings(item, _join(path, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                found.append((path, value, i, False))
            found.extend(_strings(item, _join(path, i)))
    return found


# The study file `vtrain tune` and `--study` read, beside the job documents.
STUDY = yaml.safe_load(Path(STUDY_FILE).read_text())


@st.composite
def spoiled(draw: st.DrawFn, kinds: dict[str, Any] = SEEDS) -> tuple[str, dict[str, Any], str]:
    """(kind, a golden document with one of its strings made bad, that string's path)."""
    kind = draw(st.sampled_from(sorted(kinds)))
    document = copy.deepcopy(kinds[kind])
    path, parent, key, is_key = draw(st.sampled_from(_strings(document)))
    bad = draw(BAD_TEXT)
    if is_key:
        parent[bad] = parent.pop(key)
        return kind, document, _join(path, bad)
    parent[key] = parent[key][:1] + bad
    return kind, document, _join(path, key)


def test_every_document_kind_is_covered() -> None:
    # The engines' kinds: Vertex's two, AI Platform's two, and Kubeflow's five.
    assert {"vertex", "vertex_study", "aiplatform", "aiplatform_study"} <= set(SEEDS)
    assert {"pytorchjob", "tfjob", "xgboostjob", "trainjob", "experiment"} <= set(SEEDS)


@examples(200)
@given(case=spoiled(), from_file=st.booleans())
def test_a_bad_string_anywhere_in_any_document_is_refused_by_its_path(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, dict[str, Any], str], from_file: bool
) -> None:
    kind, document, path = case
    file = tmp_path_factory.getbasetemp() / "spoiled.json"
    with pytest.raises(ConfigError) as caught:
        if from_file:
            # ensure_ascii: the file holds the escape (\ud800, \u0000), as a hand edit would.
            file.write_text(json.dumps(document, ensure_ascii=True))
            read_job(str(file))
        else:
            load_job(document, source="job.json")
    error = caught.value
    assert error.path == path, (kind, str(error))
    assert error.problem.startswith(("a NUL character", "an unpaired surrogate")), str(error)
    assert "\n" not in str(error) and "(got" not in str(error)


@examples(50)
@given(case=spoiled({"study": STUDY}))
def test_a_bad_string_anywhere_in_a_study_file_is_refused_by_its_path(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, dict[str, Any], str]
) -> None:
    _, document, path = case
    file = tmp_path_factory.getbasetemp() / "spoiled-study.json"
    file.write_text(json.dumps(document, ensure_ascii=True))
    with pytest.raises(ConfigError) as caught:
        read_study(str(file))
    assert caught.value.path == path, str(caught.value)
    assert caught.value.problem.startswith(("a NUL character", "an unpaired surrogate"))


def _kubeflow(tmp_path: Path, value: str) -> Path:
    manifest = copy.deepcopy(SEEDS["pytorchjob"])
    container = manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    container = container["containers"][0]
    container["env"] = [{"name": "MODE", "value": "train"}, {"name": "X", "value": value}]
    path = tmp_path / "kf.yaml"
    # The escapes written as the report's YAML has them.
    path.write_text(json.dumps(manifest, ensure_ascii=True))
    return path


KF_PATH = "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].env[1].value"


def test_the_reported_manifest_is_refused_by_the_rehearsal(vtrain: Run, tmp_path: Path) -> None:
    path = _kubeflow(tmp_path, "\udcff\ud800")
    out = tmp_path / "out"
    done = vtrain(
        "local", "run", "--job", str(path), "--output-dir", str(out), "--", sys.executable, "t.py"
    )
    assert done.status == 2, done.err
    assert done.err.endswith(
        f"vtrain local: error: {path}: {KF_PATH}: an unpaired surrogate (U+DCFF) at character 1"
        " of a string; expected UTF-8 text without NUL: no command line, variable or API field"
        " can hold anything else. Hint: a \\uD800-\\uDFFF escape stands for half a character:"
        " write the character itself\n"
    ), done.err
    assert "verdict" not in done.err and "Traceback" not in done.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("platform", "document", "where"),
    [
        ("kubeflow", "pytorchjob", KF_PATH),
        ("aiplatform", "aiplatform", "trainingInput.masterConfig.containerArgs[1]"),
        ("vertex", "vertex", "jobSpec.workerPoolSpecs[0].containerSpec.args[1]"),
    ],
)
def test_submit_dry_run_refuses_it_in_every_engine(
    vtrain: Run, tmp_path: Path, platform: str, document: str, where: str
) -> None:
    if document == "pytorchjob":
        path = _kubeflow(tmp_path, "ok\ud800")
    else:
        job = copy.deepcopy(SEEDS[document])
        parent: Any = job
        *keys, last = where.replace("]", "").replace("[", ".").split(".")
        for key in keys:
            parent = parent[int(key) if key.isdigit() else key]
        parent[int(last)] = "\udcff"
        path = tmp_path / "job.json"
        path.write_text(json.dumps(job, ensure_ascii=True))
    done = vtrain("submit", platform, "--job", str(path), "--project", "p12345", "--dry-run")
    assert done.status == 2, done.err
    assert f"{path}: {where}: an unpaired surrogate" in done.err, done.err
    assert done.err.count("\n") == 1 and done.out == ""


def _fifo(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    os.mkfifo(path)  # no writer: a plain open() would wait for one forever
    return str(path)


def _folder(tmp_path: Path, name: str) -> str:
    (tmp_path / name).mkdir()
    return str(tmp_path / name)


KINDS = {
    "a FIFO (named pipe)": _fifo,
    "a character device": lambda _, __: "/dev/zero",
    "a folder": _folder,
}
# Every command that reads a job or study file, with the file's place as {}.
COMMANDS = {
    "local": ("job.yaml", "the job file", ["local", "run", "--job", "{}", "--", "true"]),
    "submit": ("job.yaml", "the job file", ["submit", "vertex", "--job", "{}", "--dry-run"]),
    "tune": ("study.yaml", "the study file", ["tune", "--study", "{}", "--", "true"]),
    "render": (
        "study.yaml",
        "the study file",
        ["render", "vertex", "--image", "gcr.io/p/t:1", "--study", "{}", "--", "python", "t.py"],
    ),
}


@pytest.mark.timeout(120)  # the bug this guards against blocks forever
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_job_or_study_that_is_not_a_regular_file_is_refused(
    vtrain: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, command: str
) -> None:
    name, what, argv = COMMANDS[command]
    path = KINDS[kind](tmp_path, name)
    monkeypatch.chdir(tmp_path)
    done = vtrain(*(path if a == "{}" else a for a in argv))
    assert done.status == 2, done.err
    assert done.err == (
        f"vtrain {command}: error: {printable(path)}: {what} is {kind}; expected a regular file"
        " (a .yaml or .json document)\n"
    ), done.err


@pytest.mark.parametrize("verb", ["render", "submit"])
def test_a_command_line_byte_that_is_not_utf8_is_refused_for_the_api(
    verb: str, tmp_path: Path
) -> None:
    # A real process with real bytes: Python turns the 0xff into a surrogate, which a local
    # process would get back as the byte, and no API can take.
    argv = [sys.executable, "-m", "vtrain", verb, "kubeflow", "--image", "gcr.io/p/t:1"]
    argv += ["--framework", "pytorch", "--env", "MODE=train"]
    done = subprocess.run(
        [a.encode() for a in argv] + [b"--env", b"TOKEN=s3cr\xff", b"--", b"python", b"t\xff.py"],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert err == (
        f"vtrain {verb}: error: 2 problems:\n"
        "  --env[1]: a byte that is not UTF-8 (0xff) at character 11; expected UTF-8 text: the "
        "job's API takes no other\n"
        "  COMMAND[1]: a byte that is not UTF-8 (0xff) at character 2; expected UTF-8 text: the "
        "job's API takes no other\n"
    ), err
    assert "s3cr" not in err  # an --env value may be a credential


def test_a_job_file_whose_name_is_not_utf8_is_still_read(tmp_path: Path) -> None:
    # A file name never reaches the API: any name the file system takes is a job file's.
    name = b"job\xff.json"
    (tmp_path / os.fsdecode(name)).write_text(json.dumps(SEEDS["vertex"]))
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"vtrain", b"submit", b"vertex", b"--job", name]
        + [b"--project", b"p12345", b"--dry-run"],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"workerPoolSpecs" in done.stdout
