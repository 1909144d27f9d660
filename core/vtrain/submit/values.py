"""The values of `vtrain submit` flags read from their text: accelerators, durations, NAME=VALUE.

Each reader names the flag in its error, with the value and what was expected;
a value that --env gives is never shown (it may be a credential), only its name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from vtrain.cluster.fields import MAX_DIGITS, natural
from vtrain.errors import Problems, UsageError, VtrainError

# What the platform sets on each replica: a value given with --env would be overwritten
# there, or would lie to the reader here.
PLATFORM_OWNED = re.compile(
    r"CLUSTER_SPEC|TF_CONFIG|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|AIP_\w*|CLOUD_ML_\w*"
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Vertex and AI Platform labels: lowercase letters, digits, '_' and '-', at most 63 each.
_LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
_LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
# Kubernetes: a DNS-1123 label, a DNS-1123 subdomain (a label key's prefix), and the name part
# of a label key, which is also what a non-empty label value is.
DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_K8S_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
MAX_LABEL = 63
_MAX_SUBDOMAIN = 253
_DURATION = re.compile(rf"([0-9]{{1,{MAX_DIGITS}}})([smhd]?)")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Accelerator:
    """An accelerator attached to every replica of a pool: its type and how many."""

    type: str
    count: int
    flag: str = field(default="--accelerator", compare=False)
    """The flag that asked for it, for errors found later (an unknown type)."""


def parse_accelerator(text: str, flag: str) -> Accelerator | None:
    """Read ``TYPE:COUNT``, ``TYPE`` (one) or ``none``."""
    expected = "TYPE:COUNT, e.g. NVIDIA_TESLA_T4:2, or none"
    if text.lower() == "none":
        return None
    kind, _, count_text = text.partition(":")
    if not kind or kind.isdigit():
        raise UsageError(
            "an accelerator count with no accelerator type",
            source=flag,
            value=text,
            expected=expected,
        )
    if not count_text:
        return Accelerator(kind, 1, flag)
    count = natural(count_text)
    if count is None or count < 1:
        raise UsageError("not an accelerator count", source=flag, value=text, expected=expected)
    return Accelerator(kind, count, flag)


@dataclass(frozen=True)
class LabelRule:
    """Which labels an engine takes: a test of (key, value), and the rule in words."""

    ok: Callable[[str, str], bool]
    says: str


def _google_label(key: str, value: str) -> bool:
    return bool(_LABEL_KEY.fullmatch(key) and _LABEL_VALUE.fullmatch(value))


def kubernetes_label(key: str, value: str) -> bool:
    """Kubernetes' rule for a label: ``[prefix/]name`` and a value of at most 63."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (len(prefix) <= _MAX_SUBDOMAIN and _DNS_1123_SUBDOMAIN.fullmatch(prefix)):
        return False
    name_ok = len(name) <= MAX_LABEL and bool(_K8S_LABEL_NAME.fullmatch(name))
    value_ok = not value or (len(value) <= MAX_LABEL and bool(_K8S_LABEL_NAME.fullmatch(value)))
    return name_ok and value_ok


GOOGLE_LABELS = LabelRule(
    _google_label,
    "key and value of lowercase letters, digits, '_' or '-' (key starts with a letter, "
    "each at most 63)",
)
KUBERNETES_LABELS = LabelRule(
    kubernetes_label,
    "Kubernetes' label rule: [PREFIX/]NAME=VALUE, NAME and VALUE at most 63 letters, digits, "
    "'-', '_' or '.' starting and ending with a letter or digit (VALUE may be empty), PREFIX a "
    "DNS subdomain such as app.kubernetes.io",
)


def parse_duration(text: str, flag: str) -> int:
    """Seconds from ``3600``, ``3600s``, ``90m``, ``2h`` or ``7d``."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match[1]) == 0:
        raise UsageError(
            "not a duration", source=flag, value=text, expected="a positive 3600, 3600s, 90m or 2h"
        )
    return int(match[1]) * _SECONDS[match[2]]


def split_command(argv: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``-- CMD ARGS`` -> (command, args); ``-- --flag ...`` keeps the image's entrypoint."""
    words = list(argv)
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        return (), ()
    # Flags first: they are the arguments of the image's own ENTRYPOINT.
    if words[0].startswith("-"):
        return (), tuple(words)
    return (words[0],), tuple(words[1:])


def parse_pairs(
    flag: str, items: Sequence[str], *, env: bool, labels: LabelRule = GOOGLE_LABELS
) -> tuple[tuple[tuple[str, str], ...], list[VtrainError]]:
    """The ``NAME=VALUE`` items of --env (variables) or --label (`labels`' rule), and problems.

    An --env value is never quoted in a problem: it may be a credential.
    """
    found: dict[str, str] = {}
    problems = Problems(flag)
    bad = partial(problems.bad, None)

    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            # Without "=" the item may be a bare credential: it is shown redacted, like all values.
            bad("not NAME=VALUE", item, "NAME=VALUE")
            continue
        if "\0" in item:
            # Only the name is shown: the value may be a credential.
            bad("a NUL character (\\0) in NAME=VALUE", key, "text without NUL")
            continue
        if env and not _ENV_NAME.fullmatch(key):
            bad("not a variable name", key, "letters, digits and '_'")
        elif env and PLATFORM_OWNED.fullmatch(key):
            bad(
                "the platform sets this variable on every replica",
                key,
                "a variable of your own",
                hint="vtrain reads the platform's value",
            )
        elif not env and not labels.ok(key, value):
            bad("not a label", item, labels.says)
        if key in found and found[key] != value:
            # The job would silently keep the last one; which was meant is the user's call.
            if env:  # the values are not shown: they may be credentials
                problems.bad(
                    None, f"{key} is given twice, with two values", expected="each variable once"
                )
            else:
                bad(
                    f"key {key!r} is given twice",
                    f"{key}={found[key]} and {key}={value}",
                    "each key once",
                )
        found[key] = value
    return tuple(found.items()), problems.errors
