"""The corpus that keeps the verdict honest: every script gets exactly the findings it names.

Each script in corpus/ is a small job that breaks one rule in one way (Python's
`open`, native code, a rename, a subprocess, a host path) or keeps it. Its first
lines say what its rehearsal must find and how it is rehearsed:

    # expect: leader            the checks its findings must name, exactly ("ready": none)
    # run: --workers 1 ...      `vtrain local run` options ({inputs}, {uid} filled in)
    # env: NAME=VALUE           set for the rehearsal
    # args: --epochs 2          the script's own arguments
    # needs: module             a module only another session installs (it runs them there)

Every script runs through a real `vtrain local run --verdict-json`, two at a
time; only the checks are compared, not the texts. bench/verdict.py prints the
confusion table of the same runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vtrain.local.verdict import CHECKS  # every one: three scripts break it, three keep it

CORPUS = Path(__file__).parent / "corpus"
ELSEWHERE = {"kubeflow_katib_api": "tests/submit/test_verdict_corpus_submit.py"}
"""A module some scripts need, and the test that runs them in the session that installs it."""
_HEADER = ("expect", "run", "env", "args", "needs")
_CLEARED = ("CLOUD_ML_HP_METRIC_TAG", "CLOUD_ML_HP_METRIC_FILE", "CLOUD_ML_TRIAL_ID")


@dataclass(frozen=True)
class Case:
    """One corpus script and what its header says."""

    name: str
    path: Path
    expect: frozenset[str]
    options: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    needs: str | None = None
    keeps: bool = field(default=False)

    @classmethod
    def read(cls, path: Path) -> Case:
        fields: dict[str, str] = {}
        for line in path.read_text().splitlines():
            if not line.startswith("#"):
                break
            key, _, value = line[1:].strip().partition(":")
            if key in _HEADER:
                fields[key] = value.strip()
        expect = frozenset(fields["expect"].split()) - {"ready"}
        return cls(
            name=path.stem,
            path=path,
            expect=expect,
            options=tuple(shlex.split(fields.get("run", ""))),
            env=tuple(tuple(kv.split("=", 1)) for kv in shlex.split(fields.get("env", ""))),  # type: ignore[misc]
            args=tuple(shlex.split(fields.get("args", ""))),
            needs=fields.get("needs"),
            keeps="-keep-" in path.stem,
        )

    @property
    def runnable(self) -> bool:
        """True where this interpreter has what the script needs."""
        return self.needs is None or importlib.util.find_spec(self.needs) is not None


def cases() -> list[Case]:
    """Every script of the corpus, by name."""
    return [Case.read(p) for p in sorted(CORPUS.glob("*.py")) if not p.name.startswith("_")]


@dataclass(frozen=True)
class Rehearsed:
    """What one rehearsal found: its checks (None when it wrote no verdict) and its output."""

    found: frozenset[str] | None
    output: str


def rehearse(case: Case, folder: Path) -> Rehearsed:
    """Run `case` through `vtrain local run --verdict-json` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "inputs").symlink_to(CORPUS / "inputs")  # relative data URIs, read-only inputs
    uid = uuid.uuid4().hex[:12]
    job_id = f"corpus-{uid}"
    fill = {"{inputs}": str(CORPUS / "inputs"), "{uid}": uid}
    options = [_filled(o, fill) for o in case.options]
    if "--workers" not in options:
        options = ["--workers", "1", *options]
    if "--output-dir" not in options:
        options += ["--output-dir", str(folder / "out")]
    verdict = folder / "verdict.json"
    command = [sys.executable, "-m", "vtrain", "local", "run", *options, "--job-id", job_id]
    command += ["--verdict-json", str(verdict), "--", sys.executable, str(case.path), *case.args]
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED and not k.startswith("AIP_")}
    env.update(dict(case.env))
    try:
        done = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, timeout=120
        )
        output = f"$ {shlex.join(command)}\n{done.stdout}{done.stderr}"
    except subprocess.TimeoutExpired as e:
        return Rehearsed(None, f"timed out after {e.timeout} s: {shlex.join(command)}")
    finally:
        # The scripts that write the host's /tmp write it per job (see _corpus.host_tmp).
        shutil.rmtree(f"/tmp/vtrain-corpus-{job_id}", ignore_errors=True)
    if not verdict.exists():
        return Rehearsed(None, output)
    findings = json.loads(verdict.read_text())["findings"]
    return Rehearsed(frozenset(f["check"] for f in findings), output)


def rehearse_all(chosen: Iterable[Case], folder: Path, workers: int = 2) -> dict[str, Rehearsed]:
    """Each case rehearsed, `workers` at a time: one rehearsal's waits leave a core idle."""
    chosen = list(chosen)
    with ThreadPoolExecutor(workers) as pool:
        done = pool.map(lambda c: rehearse(c, folder / c.name), chosen)
        return {c.name: r for c, r in zip(chosen, done, strict=True)}


def _filled(option: str, fill: dict[str, str]) -> str:
    for key, value in fill.items():
        option = option.replace(key, value)
    return option


HERE = [c for c in cases() if c.runnable]


@pytest.fixture(scope="module")
def rehearsed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Rehearsed]:
    """The selected cases of this module, all rehearsed at once (two at a time)."""
    selected = {
        item.callspec.params["case"].name
        for item in request.session.items
        if item.module is sys.modules[__name__]
        and hasattr(item, "callspec")
        and "case" in item.callspec.params
    }
    chosen = [c for c in HERE if c.name in selected]
    return rehearse_all(chosen, tmp_path_factory.mktemp("corpus"))


@pytest.mark.parametrize("case", HERE, ids=lambda c: c.name)
def test_the_script_gets_exactly_its_findings(case: Case, rehearsed: dict[str, Rehearsed]) -> None:
    got = rehearsed[case.name]
    assert got.found is not None, got.output
    assert sorted(got.found) == sorted(case.expect), got.output


def test_every_check_has_three_scripts_that_break_it_and_three_that_keep_it() -> None:
    every = cases()
    for check in CHECKS:
        breaking = [c.name for c in every if check in c.expect]
        keeping = [c.name for c in every if c.keeps and c.name.startswith(f"{check}-")]
        assert len(breaking) >= 3 and len(keeping) >= 3, (check, breaking, keeping)
    for case in every:
        assert case.expect <= set(CHECKS), case.name
        assert not case.keeps or not case.expect, case.name  # a keeper expects `ready`


def test_a_script_this_session_cannot_run_runs_in_one_that_can() -> None:
    for case in cases():
        if case.needs is not None:
            assert case.needs in ELSEWHERE, case.name
