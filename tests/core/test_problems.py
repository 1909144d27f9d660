"""`vtrain.errors.Problems`: every "all problems at once" refusal has one shape."""

from __future__ import annotations

import pytest

from vtrain.errors import ConfigError, ErrorList, Problems, UsageError, VtrainError


def _raised(problems: Problems) -> VtrainError | None:
    try:
        problems.raise_all()
    except VtrainError as e:
        return e
    return None


@pytest.mark.parametrize(
    ("problems", "calls", "kind", "text"),
    [
        pytest.param(Problems(), [], None, None, id="nothing found raises nothing"),
        pytest.param(
            Problems(),
            [("--name", "not a job name", "A b", "lower case")],
            UsageError,
            "--name: not a job name (got 'A b'); expected lower case",
            id="without a source, where is the source",
        ),
        pytest.param(
            Problems("TF_CONFIG", kind=ConfigError),
            [("task.index", "out of range", 3, "0 or 1")],
            ConfigError,
            "TF_CONFIG: task.index: out of range (got 3); expected 0 or 1",
            id="with a source, where is the path inside it",
        ),
        pytest.param(
            Problems("study.yaml", kind=ConfigError),
            [("a", "missing", ..., None), ("b", "unknown field", ..., "one of c")],
            ErrorList,
            "2 problems:\n  study.yaml: a: missing\n"
            "  study.yaml: b: unknown field; expected one of c",
            id="several are raised together",
        ),
        pytest.param(
            Problems(dedupe=True),
            [("--ps", "no workers", 1, "--workers"), ("--ps", "no workers", 1, "--workers")],
            UsageError,
            "--ps: no workers (got 1); expected --workers",
            id="dedupe records the same problem once",
        ),
        pytest.param(
            Problems(),
            [("--ps", "no workers", 1, "--workers"), ("--ps", "no workers", 1, "--workers")],
            ErrorList,
            "2 problems:\n  --ps: no workers (got 1); expected --workers\n"
            "  --ps: no workers (got 1); expected --workers",
            id="without dedupe, each is kept",
        ),
    ],
)
def test_problems_are_raised_in_one_shape(
    problems: Problems,
    calls: list[tuple[str, str, object, str | None]],
    kind: type | None,
    text: str | None,
) -> None:
    for where, problem, value, expected in calls:
        problems.bad(where, problem, value, expected)
    assert bool(problems) == (kind is not None)
    raised = _raised(problems)
    assert (type(raised) if raised else None, str(raised) if raised else None) == (kind, text)


def test_a_problem_may_name_its_own_kind_and_source_and_readers_errors_join_them() -> None:
    problems = Problems("CLUSTER_SPEC", kind=ConfigError)
    problems.bad("--output-dir", "not gs://", "x", "gs://B/P", source="argv", kind=UsageError)
    problems.add(ConfigError("broken", source="TF_CONFIG"))
    raised = _raised(problems)
    assert isinstance(raised, ErrorList)
    assert [type(e) for e in raised.errors] == [UsageError, ConfigError]
    assert str(raised.errors[0]) == "argv: --output-dir: not gs:// (got 'x'); expected gs://B/P"
