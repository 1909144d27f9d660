"""Checking a JSON value against a schema of a Google discovery document (ml v1).

Discovery schemas are a small JSON-Schema dialect: `type`, `format`,
`properties`, `additionalProperties`, `items`, `$ref` and `enum`. This checks
exactly those, and refuses a property the schema does not name, as the API does.
A rule the dialect cannot say is written in a field's description instead:
"this field and [TrainingInput.args] are mutually exclusive" (ml v1's
ReplicaConfig.containerCommand and containerArgs). Those sentences are read
from the document too, and a value that sets both fields is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# [0-9], not \d: in a str pattern \d also matches '١٢٣', which no API accepts as a number.
_INT64 = re.compile(r"-?[0-9]{1,19}")
_DURATION = re.compile(r"-?[0-9]+(\.[0-9]{1,9})?s")
_EXCLUSIVE = re.compile(r"this field and \[(\w+)\.(\w+)\] are mutually exclusive")


@dataclass(frozen=True)
class Exclusive:
    """A field of one schema that may not be set together with a field of an enclosing one."""

    schema: str
    field: str
    other_schema: str
    other_field: str


def exclusive_fields(schemas: Mapping[str, Any]) -> list[Exclusive]:
    """Every pair of fields a description calls mutually exclusive, as the document says it."""
    found = []
    for schema_id, schema in schemas.items():
        for name, prop in schema.get("properties", {}).items():
            match = _EXCLUSIVE.search(prop.get("description", ""))
            if match is None:
                continue
            # The description names the message ("TrainingInput"); the id has a prefix.
            other = [s for s in schemas if s == match[1] or s.endswith("__" + match[1])]
            if other:
                found.append(Exclusive(schema_id, name, other[0], match[2]))
    return found


def problems(
    value: Any, schema: Mapping[str, Any], schemas: Mapping[str, Any], path: str
) -> list[tuple[str, str, Any]]:
    """Every (path, problem, value) where `value` breaks `schema`; empty when it conforms."""
    found: list[tuple[str, str, Any]] = []
    _check(value, schema, schemas, path, found, _Walk(exclusive_fields(schemas), []))
    return found


@dataclass
class _Walk:
    """What a check carries down: the exclusivity rules, and the objects it is inside."""

    rules: list[Exclusive]
    enclosing: list[tuple[str, str, Mapping[str, Any]]]
    """(schema id, path, value) of each object from the top down to the current one."""


def _set(value: Any) -> bool:
    return value not in (None, [], {}, "")


def _exclusive(
    schema_id: str,
    value: Mapping[str, Any],
    path: str,
    walk: _Walk,
    found: list[tuple[str, str, Any]],
) -> None:
    for rule in walk.rules:
        if rule.schema != schema_id or not _set(value.get(rule.field)):
            continue
        for other_id, other_path, other in reversed(walk.enclosing):
            if other_id == rule.other_schema and _set(other.get(rule.other_field)):
                short = rule.other_schema.rsplit("__", 1)[-1]
                found.append(
                    (
                        f"{path}.{rule.field}",
                        f"set together with {other_path}.{rule.other_field}, and {short}."
                        f"{rule.other_field} and {rule.field} are mutually exclusive",
                        value[rule.field],
                    )
                )
                break


def _check(
    value: Any,
    schema: Mapping[str, Any],
    schemas: Mapping[str, Any],
    path: str,
    found: list[tuple[str, str, Any]],
    walk: _Walk,
) -> None:
    if "$ref" in schema:
        schema = schemas[schema["$ref"]]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, Mapping):
            found.append((path, "not an object", value))
            return
        schema_id = schema.get("id", "")
        walk.enclosing.append((schema_id, path, value))
        _exclusive(schema_id, value, path, walk, found)
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            where = f"{path}.{key}"
            if key in properties:
                _check(item, properties[key], schemas, where, found, walk)
            elif extra is not None:
                _check(item, extra, schemas, where, found, walk)
            else:
                found.append((where, f"unknown field of {schema.get('id', 'this object')}", key))
        walk.enclosing.pop()
    elif kind == "array":
        if not isinstance(value, list):
            found.append((path, "not a list", value))
            return
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), schemas, f"{path}[{i}]", found, walk)
    elif kind == "string":
        fmt = schema.get("format")
        # int64 travels as a JSON string; a plain integer is accepted too, as the API does.
        if fmt == "int64" and isinstance(value, int) and not isinstance(value, bool):
            if not -(2**63) <= value < 2**63:
                found.append((path, "out of int64's range", value))
            return
        if not isinstance(value, str):
            found.append((path, "not a string", value))
        elif fmt == "int64" and not _INT64.fullmatch(value):
            found.append((path, "not an integer", value))
        elif fmt == "int64" and not -(2**63) <= int(value) < 2**63:
            found.append((path, "out of int64's range", value))
        elif fmt == "google-duration" and not _DURATION.fullmatch(value):
            found.append((path, "not a duration like '3600s'", value))
        elif "enum" in schema and value not in schema["enum"]:
            found.append((path, "not one of " + ", ".join(schema["enum"]), value))
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            found.append((path, "not an integer", value))
        elif schema.get("format") == "int32" and not -(2**31) <= value < 2**31:
            found.append((path, "out of int32's range", value))
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            found.append((path, "not a number", value))
    elif kind == "boolean" and not isinstance(value, bool):
        found.append((path, "not true or false", value))
