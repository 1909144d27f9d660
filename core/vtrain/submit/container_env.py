"""A job document's container env, read for a rehearsal: names a process can take, string values.

Vertex's proto JSON leaves an empty name out altogether, so an entry may have
no name; a name with "=" would set another variable than the one it names.
Each is refused naming its place in the document, before any replica starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.errors import ConfigError, Problems

NAME_RULE = "a non-empty name without '=' or NUL, e.g. LEARNING_RATE"


def name_problem(name: object) -> str | None:
    """Why `name` cannot be an environment variable's name, or None."""
    if not isinstance(name, str) or not name:
        return "a variable without a name"
    if "=" in name or "\0" in name:
        return "not a variable name"
    return None


def container_env(
    entries: Any, *, source: str, path: str, skip: tuple[str, ...] = ()
) -> dict[str, str]:
    """`[{name, value}, ...]` at `path` as variables; `skip`: those the rehearsal sets itself."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ConfigError(
            "not a list",
            source=source,
            path=path,
            value=entries,
            expected="a list of {name, value}",
        )
    problems = Problems(source, kind=ConfigError)
    env: dict[str, str] = {}
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        name = entry.get("name") if isinstance(entry, Mapping) else None
        problem = name_problem(name)
        if problem is not None:
            problems.bad(f"{where}.name", problem, name, NAME_RULE)
            continue
        assert isinstance(entry, Mapping) and isinstance(name, str)
        # valueFrom (a Kubernetes secret or field) has no value here: the variable is empty.
        value = entry.get("value")
        if value is None:
            value = ""
        if not isinstance(value, str):
            problems.bad(f"{where}.value", "not a string", value, 'a string (quote numbers: "8")')
        elif name not in skip:
            env[name] = value
    problems.raise_all()
    return env
