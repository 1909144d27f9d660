"""Relative names inside a location: checked so that nothing can climb out of it."""

from __future__ import annotations

from vtrain.errors import StorageError

_MAX_COMPONENT = 255
_FORBIDDEN = frozenset("\\\x00")


def check_name(name: str, *, where: str, what: str = "name") -> str:
    """`name` if it is a relative, '/'-separated path that stays inside `where`.

    Otherwise raises `StorageError`, naming `where` and calling the value `what`
    ("name", "object path"): an empty name, a part that is empty, '.' or '..', or one
    with a backslash, a control character or over 255 characters.
    """
    if not isinstance(name, str) or not name:
        raise StorageError(
            f"{what} is empty or not a string",
            source=where,
            value=name,
            expected="a relative path such as 'model.pt' or 'variables/data-0'",
        )
    for part in name.split("/"):
        bad = (
            part in ("", ".", "..")
            or len(part) > _MAX_COMPONENT
            or any(c in _FORBIDDEN or ord(c) < 32 for c in part)
        )
        if bad:
            raise StorageError(
                f"{what} could escape or confuse its folder",
                source=where,
                value=name,
                expected=(
                    "'/'-separated parts that are not empty, '.' or '..', with no backslash "
                    f"or control character, each at most {_MAX_COMPONENT} characters"
                ),
            )
    return name


def join_name(*names: str) -> str:
    """Join relative names with '/', skipping empty ones (the location itself); unchecked."""
    return "/".join(n for n in names if n)
