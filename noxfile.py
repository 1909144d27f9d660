"""Test sessions: the core without any framework, lint, and one session per framework.

`nox` runs them all but the long campaigns (the README's test command, which CI runs);
`nox -s faults --parallel 2` runs the whole fault matrix (CI runs it after `nox`; two at a
time, as its kills are timed against a busy machine, not an overloaded one), and `nox -s fuzz`
the 10,000-example property campaign on demand.
"""

from __future__ import annotations

import nox

# `--parallel` came with this release: older ones would run the sessions one after another.
nox.needs_version = ">=2026.10.20"
nox.options.error_on_missing_interpreters = True
nox.options.reuse_existing_virtualenvs = True
# Three sessions at a time, on any machine. On the 2-core machines CI uses, two at a time kept
# the cores 151% busy of 200% (`/usr/bin/time -v nox`, 16 min 45 s): a session's waits for
# peers, kills, restarts and timeouts leave a core idle, which a third session uses.
nox.options.parallel = 3
nox.options.allow_parallel = True

CONSTRAINTS = ("-c", "tests/constraints.txt")
# The documentation site's builder, its theme and the API reference from the docstrings.
DOCS = ("mkdocs", "mkdocs-material", "mkdocstrings[python]")

# framework -> the extras its session installs, test-only packages, and the test folders.
# Each framework plugin adds its row; MXNet gets a row of its own because it needs numpy<1.24.
# local-mlflow: each framework's killed job is tracked to a real MLflow server (MXNet's
# numpy<1.24 is older than MLflow takes; its report reaches the run as PyTorch's does).
FRAMEWORKS: dict[str, dict[str, list[str]]] = {
    "pytorch": {"extras": ["pytorch", "lightning", "local-mlflow"], "tests": ["tests/pytorch"]},
    "tensorflow": {"extras": ["tensorflow", "local-mlflow"], "tests": ["tests/tensorflow"]},
    "mxnet": {"extras": ["mxnet"], "tests": ["tests/mxnet"]},
    # scikit-learn: the tests train XGBRegressor inside the collective; users of xgb.train
    # do not need it.
    "xgboost": {
        "extras": ["xgboost", "local-mlflow"],
        "also": ["scikit-learn"],
        "tests": ["tests/xgboost"],
    },
}


@nox.session
def core(session: nox.Session) -> None:
    """The core, the local cluster, storage and tuning: no framework installed."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune,bigquery,local-gcs]")
    session.run("pytest", "tests/core", *session.posargs)


@nox.session
def submit(session: nox.Session) -> None:
    """`vtrain submit`: rendering, the Vertex/Kubeflow clients against local servers, rehearsals."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune,submit,local-gcs]")
    session.run("pytest", "tests/submit", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The campaign: every core and submit property test (parsers, job and study documents, CLI
    entry points), 10,000 examples each; and ten times the checkpoint crash test's kills."""
    session.install(*CONSTRAINTS, "-e", ".[test,tune,submit,local-gcs]")
    # Two runs: each folder's conftest is named `conftest`, and one pytest run takes one.
    for folder in ("tests/core", "tests/submit"):
        session.run(
            "pytest",
            folder,
            "-m",
            "hypothesis",
            "--hypothesis-show-statistics",
            "-p",
            "no:cacheprovider",
            *session.posargs,
            env={"VTRAIN_FUZZ": "1"},
        )
    crash = "tests/core/checkpoints/test_checkpoint_crash.py"
    session.run(
        "pytest", crash, "-p", "no:cacheprovider", *session.posargs, env={"VTRAIN_FUZZ": "1"}
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (the linter and the formatter's check) on everything, mypy (strict) on the core and
    the plugins, and the documentation site built strict (no broken link, page or reference)."""
    # The optional pieces the core imports lazily, so that mypy sees the same code CI runs.
    session.install(*CONSTRAINTS, "ruff", "mypy", "-e", ".[gcs,tune,bigquery]", *DOCS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    # Material's notice of its successor is no finding; the site goes where nothing keeps it.
    site = session.create_tmp()
    env = {"NO_MKDOCS_2_WARNING": "1"}
    session.run("mkdocs", "build", "--strict", "--site-dir", f"{site}/site", env=env)


def _install_framework(session: nox.Session, framework: str) -> list[str]:
    """Install one framework's extras and test-only packages; return its test folders."""
    row = FRAMEWORKS[framework]
    extras = ",".join(["test", *row["extras"]])
    # kubeflow-trainer-api: each framework's example is rendered as a TrainJob (the Trainer's
    # models check it) and rehearsed from that file.
    also = [*row.get("also", []), "kubeflow-trainer-api"]
    session.install(*CONSTRAINTS, "-e", f".[{extras}]", *also)
    return row["tests"]


if FRAMEWORKS:

    @nox.session
    @nox.parametrize("framework", sorted(FRAMEWORKS))
    def framework(session: nox.Session, framework: str) -> None:
        """One framework's plugin, with the real framework installed."""
        tests = _install_framework(session, framework)
        # Each framework's representative fault cells stay here; `faults` runs the rest.
        session.run("pytest", *tests, "-m", "not faults", *session.posargs)

    @nox.session
    # Longest first (minutes, two at a time, measured): tensorflow 12, pytorch 9 to 11,
    # mxnet 4, xgboost 3; so that the last two do not wait behind TensorFlow alone.
    @nox.parametrize(
        "framework", sorted(FRAMEWORKS, key=["tensorflow", "pytorch"].__contains__, reverse=True)
    )
    def faults(session: nox.Session, framework: str) -> None:
        """The fault matrix: kills, preemptions and restarts of one framework's jobs."""
        tests = _install_framework(session, framework)
        # 5 is pytest's "no tests collected": a framework whose every cell is representative.
        session.run("pytest", *tests, "-m", "faults", *session.posargs, success_codes=[0, 5])


# The default (`nox`, and CI): every functional test, within 15 minutes on a 2-core machine.
# The property tests run there at hypothesis' ordinary counts; `fuzz` is the long campaign.
# Ordered so that the three at a time finish together (seconds of pytest, two at a time:
# pytorch 510, core 460, tensorflow 395, xgboost 205, mxnet 180, submit 110, lint 15): the three
# longest first, then xgboost where tensorflow ends, mxnet where core ends, submit where pytorch
# ends.
nox.options.sessions = [
    "framework(framework='pytorch')",
    "core",
    "framework(framework='tensorflow')",
    "framework(framework='xgboost')",
    "framework(framework='mxnet')",
    "submit",
    "lint",
]
