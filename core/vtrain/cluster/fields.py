"""Typed reads from a parsed JSON document, with errors that say where and what.

Every reader takes the variable name and the JSON path so that an error reads
like `CLUSTER_SPEC: task.index: not an integer (got '1x'); expected …`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from vtrain.errors import ConfigError
from vtrain.variables import check_trial_id

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_PORT = 65535
# Far above any real job; it stops a typo like index 99999999 from allocating a huge list.
MAX_REPLICAS = 1_000_000
# Every count, rank, index and port vtrain reads fits; int() refuses text over 4300 digits
# with a ValueError, so longer text is turned away before it gets there.
MAX_DIGITS = 18

# ASCII only: str.isdigit() and int() also take '١٢٣' and '²'.
_DIGITS = re.compile(r"[0-9]+")
# What is trimmed around a value: ASCII blanks, not all that str.strip() takes ('\x1f', '\x85').
BLANKS = " \t\n\r\x0b\x0c"
# A host name or IPv4 address (letters, digits, '-', '.', and the '_' some clusters use), or
# an IPv6 address in brackets. Nothing else: a ':' or '/' in a host is a port or a scheme
# pasted into it, and a control character would reach the terminal.
_HOST = re.compile(r"[A-Za-z0-9_.-]+|\[(?=[^]]*:[^]]*:)[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?\]")


def natural(text: str) -> int | None:
    """`text` as a non-negative integer when it is ASCII digits (at most MAX_DIGITS), else None."""
    significant = text.lstrip("0")
    if _DIGITS.fullmatch(text) is None or len(significant) > MAX_DIGITS:
        return None
    return int(significant or "0")


def is_host(text: str) -> bool:
    """True for a host name, an IPv4 address or a bracketed IPv6 address."""
    return _HOST.fullmatch(text) is not None


def address_key(address: str) -> tuple[str, int | str]:
    """What makes two addresses the same: the host without case, the port as a number."""
    host, _, port = address.rpartition(":")
    number = natural(port)
    return host.lower(), port if number is None else number


def parse_json(variable: str, text: str | bytes, path: str | None = None) -> Any:
    """Decode a JSON document held in `variable`, or in the string at `path` inside it."""
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError) as e:
        inside = f" and the string at {path}" if path else ""
        raise ConfigError(
            f"not valid JSON ({e})",
            source=variable,
            path=path,
            value=text,
            hint=f'print the variable with `echo "${variable}"` and check its quoting{inside}',
        ) from None


def mapping(variable: str, path: str, value: Any) -> Mapping[str, Any]:
    """`value` as a JSON object."""
    if not isinstance(value, Mapping):
        raise ConfigError("not a JSON object", source=variable, path=path, value=value)
    return value


def optional_mapping(variable: str, path: str, value: Any) -> Mapping[str, Any] | None:
    """`value` as a JSON object, None when absent, or a JSON object encoded as a string.

    Vertex sometimes sends `job` as a JSON string inside the JSON; both mean the same.
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = parse_json(variable, value, path) if value.strip() else {}
    return mapping(variable, path, value)


def role(variable: str, path: str, name: str, names: Mapping[str, str]) -> str:
    """The normalized role for a source's own role name (`names` maps one to the other)."""
    if name not in names:
        raise ConfigError(
            "unknown role",
            source=variable,
            path=path,
            value=name,
            expected="one of " + ", ".join(repr(n) for n in names),
        )
    return names[name]


def string(variable: str, path: str, value: Any) -> str:
    """`value` as a JSON string."""
    if not isinstance(value, str):
        raise ConfigError("not a string", source=variable, path=path, value=value)
    return value


def index(variable: str, path: str, value: Any) -> int:
    """`value` as a non-negative integer; a string of digits is accepted (Kubeflow writes "0")."""
    if isinstance(value, bool):
        pass  # bool is an int subclass; True is not index 1
    elif isinstance(value, int) and value >= 0:
        return value
    elif isinstance(value, str) and (number := natural(value)) is not None:
        return number
    raise ConfigError(
        "not a non-negative integer",
        source=variable,
        path=path,
        value=value,
        expected=f"0, 1, 2 … (at most {MAX_DIGITS} digits)",
    )


def trial(variable: str, path: str, value: Any) -> str | None:
    """A trial id: a string or number, None when empty or absent."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = string(variable, path, value)
    return check_trial_id(text, f"{variable}: {path}")


def address(variable: str, path: str, value: Any) -> str:
    """A ``host:port`` address (``[v6]:port`` for IPv6), checked, returned unchanged."""
    text = string(variable, path, value)
    host, sep, port = text.rpartition(":")
    expected = "host:port with a port from 1 to 65535, e.g. 'cmle-training-workerpool0-ab-0:2222'"
    if not sep or not host:
        raise ConfigError(
            "address has no port", source=variable, path=path, value=value, expected=expected
        )
    number = natural(port)
    if number is None or not 1 <= number <= MAX_PORT:
        raise ConfigError("bad port", source=variable, path=path, value=value, expected=expected)
    if not is_host(host):
        if any(c.isspace() for c in host):
            problem = "host contains whitespace"
        elif ":" in host and not host.startswith("["):
            problem = "malformed host (IPv6 addresses need brackets)"
        else:
            problem = "malformed host"
        raise ConfigError(
            problem,
            source=variable,
            path=path,
            value=value,
            expected=expected + "; a host is a name, an IPv4 address or [an IPv6 address]",
        )
    return text


def addresses(variable: str, path: str, value: Any) -> tuple[str | None, ...]:
    """A role's replica list: a JSON list of addresses, or Kubeflow's sparse {"index": address}.

    Kubeflow's elastic TFJob writes `{"1": "host:port", "3": "host:port"}`; the gaps are
    replicas whose address is not known to this one, kept as None so indexes stay true.
    """
    if isinstance(value, list):
        return tuple(address(variable, f"{path}[{i}]", a) for i, a in enumerate(value))
    if isinstance(value, Mapping):
        known = {
            index(variable, f"{path}.{k}", k): address(variable, f"{path}.{k}", a)
            for k, a in value.items()
        }
        size = max(known, default=-1) + 1
        if size > MAX_REPLICAS:
            raise ConfigError(
                "replica index is implausibly large",
                source=variable,
                path=path,
                value=size - 1,
                expected=f"an index below {MAX_REPLICAS}",
            )
        return tuple(known.get(i) for i in range(size))
    raise ConfigError(
        "not a list of addresses",
        source=variable,
        path=path,
        value=value,
        expected='["host:port", …] or {"0": "host:port", …}',
    )


def lists_a_task(
    environ: Mapping[str, str], variable: str, cluster_of: Callable[[Mapping[str, Any]], Any]
) -> bool:
    """True when the document in `variable` has a cluster (`cluster_of(doc)`) with an address.

    A malformed document counts as present, so that its reader reports what is wrong.
    """
    text = environ.get(variable)
    if not text:
        return False
    try:
        doc = parse_json(variable, text)
    except ConfigError:
        return True
    if not isinstance(doc, Mapping):
        return True
    cluster = cluster_of(doc)
    if not isinstance(cluster, Mapping):
        return bool(cluster)
    return any(not isinstance(v, (list, Mapping)) or v for v in cluster.values())


def env_int(environ: Mapping[str, str], name: str, *, minimum: int = 0) -> int | None:
    """An integer environment variable, None when unset or empty."""
    text = environ.get(name, "").strip(BLANKS)
    if not text:
        return None
    value = natural(text)
    if value is None or value < minimum:
        raise ConfigError(
            "not an integer",
            source=name,
            value=text,
            expected=f"an integer >= {minimum} (at most {MAX_DIGITS} digits)",
        )
    return value


def env_required_int(environ: Mapping[str, str], name: str, why: str, *, minimum: int = 0) -> int:
    """An integer environment variable that the source in use cannot do without."""
    value = env_int(environ, name, minimum=minimum)
    if value is None:
        raise ConfigError(
            f"is not set, but {why}", source=name, expected=f"an integer >= {minimum}"
        )
    return value
