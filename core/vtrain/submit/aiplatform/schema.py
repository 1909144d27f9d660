"""Checking a JSON value against a schema of a Google discovery document (ml v1).

Discovery schemas are a small JSON-Schema dialect: `type`, `format`,
`properties`, `additionalProperties`, `items`, `$ref` and `enum`. This checks
exactly those, and refuses a property the schema does not name, as the API does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# [0-9], not \d: in a str pattern \d also matches '١٢٣', which no API accepts as a number.
_INT64 = re.compile(r"-?[0-9]{1,19}")
_DURATION = re.compile(r"-?[0-9]+(\.[0-9]{1,9})?s")


def problems(
    value: Any, schema: Mapping[str, Any], schemas: Mapping[str, Any], path: str
) -> list[tuple[str, str, Any]]:
    """Every (path, problem, value) where `value` breaks `schema`; empty when it conforms."""
    found: list[tuple[str, str, Any]] = []
    _check(value, schema, schemas, path, found)
    return found


def _check(
    value: Any,
    schema: Mapping[str, Any],
    schemas: Mapping[str, Any],
    path: str,
    found: list[tuple[str, str, Any]],
) -> None:
    if "$ref" in schema:
        schema = schemas[schema["$ref"]]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, Mapping):
            found.append((path, "not an object", value))
            return
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            where = f"{path}.{key}"
            if key in properties:
                _check(item, properties[key], schemas, where, found)
            elif extra is not None:
                _check(item, extra, schemas, where, found)
            else:
                found.append((where, f"unknown field of {schema.get('id', 'this object')}", key))
    elif kind == "array":
        if not isinstance(value, list):
            found.append((path, "not a list", value))
            return
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), schemas, f"{path}[{i}]", found)
    elif kind == "string":
        fmt = schema.get("format")
        # int64 travels as a JSON string; a plain integer is accepted too, as the API does.
        if fmt == "int64" and isinstance(value, int) and not isinstance(value, bool):
            return
        if not isinstance(value, str):
            found.append((path, "not a string", value))
        elif fmt == "int64" and not _INT64.fullmatch(value):
            found.append((path, "not an integer", value))
        elif fmt == "google-duration" and not _DURATION.fullmatch(value):
            found.append((path, "not a duration like '3600s'", value))
        elif "enum" in schema and value not in schema["enum"]:
            found.append((path, "not one of " + ", ".join(schema["enum"]), value))
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            found.append((path, "not an integer", value))
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            found.append((path, "not a number", value))
    elif kind == "boolean" and not isinstance(value, bool):
        found.append((path, "not true or false", value))
