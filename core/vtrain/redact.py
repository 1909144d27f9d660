"""Hide credentials before anything is printed: job specs carry env vars and args."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

HIDDEN = "***"
_SECRET_NAME = re.compile(r"token|secret|passw|credential|api[_-]?key|private[_-]?key|auth", re.I)
# "--api_key=abc" or "PASSWORD=abc" inside an args or command list.
_SECRET_ASSIGNMENT = re.compile(
    r"^(-{0,2}[\w.-]*(?:" + _SECRET_NAME.pattern + r")[\w.-]*=)(.+)$", re.I
)


def looks_secret(name: str) -> bool:
    """True for names like API_TOKEN, db_password, aws_secret_access_key."""
    return bool(_SECRET_NAME.search(name))


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with every credential-looking value replaced by ***."""
    if isinstance(value, Mapping):
        # The {"name": "API_TOKEN", "value": "…"} pairs of a container's env list.
        if isinstance(value.get("name"), str) and "value" in value and looks_secret(value["name"]):
            return {**{k: redact(v) for k, v in value.items()}, "value": HIDDEN}
        return {
            k: HIDDEN
            if isinstance(k, str) and looks_secret(k) and not isinstance(v, Mapping | list)
            else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        shown = [redact(v) for v in value]
        # "--password", "hunter2": the secret is the element after a bare secret flag.
        for i in range(1, len(shown)):
            flag = value[i - 1]
            bare_flag = isinstance(flag, str) and flag.startswith("-") and "=" not in flag
            if bare_flag and looks_secret(flag):
                shown[i] = HIDDEN
        return shown
    if isinstance(value, str):
        return _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + HIDDEN, value)
    return value
