"""Test sessions: the core without any framework, lint, and one session per framework.

`nox` runs them all but the long campaigns (the README's test command, and what CI
runs); `nox -s fuzz` runs the 10,000-example property campaign on demand.
"""

from __future__ import annotations

import nox

nox.options.error_on_missing_interpreters = True
nox.options.reuse_existing_virtualenvs = True

CONSTRAINTS = ("-c", "tests/constraints.txt")

# framework -> the extras its session installs, test-only packages, and the test folders.
# Each framework plugin adds its row; MXNet gets a row of its own because it needs numpy<1.24.
FRAMEWORKS: dict[str, dict[str, list[str]]] = {
    "pytorch": {"extras": ["pytorch", "lightning"], "tests": ["tests/pytorch"]},
    "tensorflow": {"extras": ["tensorflow"], "tests": ["tests/tensorflow"]},
    "mxnet": {"extras": ["mxnet"], "tests": ["tests/mxnet"]},
    # scikit-learn: the tests train XGBRegressor inside the collective; users of xgb.train
    # do not need it.
    "xgboost": {"extras": ["xgboost"], "also": ["scikit-learn"], "tests": ["tests/xgboost"]},
}


@nox.session
def core(session: nox.Session) -> None:
    """The core, the local cluster, storage and tuning: no framework installed."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune,bigquery]")
    session.run("pytest", "tests/core", *session.posargs)


@nox.session
def submit(session: nox.Session) -> None:
    """`vtrain submit`: rendering, the Vertex/Kubeflow clients against local servers, rehearsals."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune,submit]")
    session.run("pytest", "tests/submit", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The campaign: every core property test (parsers, CLI entry points), 10,000 examples each."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune]")
    session.run(
        "pytest",
        "tests/core",
        "-m",
        "hypothesis",
        "--hypothesis-show-statistics",
        "-p",
        "no:cacheprovider",
        *session.posargs,
        env={"VTRAIN_FUZZ": "1"},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy (strict) on the core and the plugins."""
    # The optional pieces the core imports lazily, so that mypy sees the same code CI runs.
    session.install(*CONSTRAINTS, "ruff", "mypy", "-e", ".[gcs,tune,bigquery]")
    session.run("ruff", "check", ".")
    session.run("mypy")


if FRAMEWORKS:

    @nox.session
    @nox.parametrize("framework", sorted(FRAMEWORKS))
    def framework(session: nox.Session, framework: str) -> None:
        """One framework's plugin, with the real framework installed."""
        row = FRAMEWORKS[framework]
        extras = ",".join(["test", *row["extras"]])
        session.install(*CONSTRAINTS, "-e", f".[{extras}]", *row.get("also", []))
        session.run("pytest", *row["tests"], *session.posargs)


# The default (`nox`, and CI): every functional test, within 15 minutes on a 2-core machine.
# The property tests run there at hypothesis' ordinary counts; `fuzz` is the long campaign.
nox.options.sessions = ["core", "submit", "lint", "framework"]
