"""Rehearsal verdicts on record, keyed by the job document's content, for `vtrain submit`.

`vtrain local run --job FILE` records its verdict under the SHA-256 of the document
(its canonical JSON); `vtrain submit` of the same document then says what the
verdict said: ``rehearsed: ready (DATE)`` or ``rehearsed: not ready: N findings``
and a line each, then what was not checked or not rehearsed; or ``not
rehearsed``. A job rehearsed with --no-model says so. It informs, and never
blocks. The records live in ``$XDG_STATE_HOME/vtrain/rehearsals/``
(``~/.local/state/vtrain/rehearsals/``), one small JSON file each.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from vtrain.local.verdict import Verdict

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def folder(environ: Mapping[str, str] | None = None) -> str:
    """Where the records are: ``$XDG_STATE_HOME/vtrain/rehearsals``."""
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "vtrain", "rehearsals")


def document_key(document: Any) -> str:
    """The SHA-256 of `document`'s canonical JSON: the same job, the same key."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def record(
    document: Any,
    verdict: Verdict,
    environ: Mapping[str, str] | None = None,
    *,
    no_model: bool = False,
) -> str:
    """Put `verdict` on record for `document` (rehearsed with --no-model: `no_model`); the
    record's path."""
    where = folder(environ)
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, document_key(document) + ".json")
    entry = {
        "ready": verdict.ready,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "findings": [f.line().strip() for f in verdict.findings],
        "not_checked": list(verdict.not_checked),
        "not_rehearsed": list(verdict.not_rehearsed),
        "no_model": no_model,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, path)  # a reader never sees half a record
    return path


def status(document: Any, environ: Mapping[str, str] | None = None) -> str:
    """``rehearsed: ready (DATE)``, ``rehearsed: not ready: N findings (DATE)`` and a line
    each, then a line per thing not checked or not rehearsed; or ``not rehearsed``: what is
    on record for `document`."""
    path = os.path.join(folder(environ), document_key(document) + ".json")
    try:
        with open(path) as f:
            entry = json.load(f)
        ready, date, findings = bool(entry["ready"]), str(entry["date"]), list(entry["findings"])
    except (OSError, ValueError, KeyError, TypeError):
        return "not rehearsed (`vtrain local run --job FILE -- COMMAND` rehearses this job)"
    # Records from before these fields were kept have none of them.
    when = f"{date}, with --no-model" if entry.get("no_model") else date
    n = len(findings)
    head = (
        f"rehearsed: ready ({when})"
        if ready
        else f"rehearsed: not ready: {n} finding{'s' if n != 1 else ''} ({when})"
    )
    lines = [
        *(f"  {line}" for line in findings),
        *(f"  not checked: {what}" for what in entry.get("not_checked") or ()),
        *(f"  not rehearsed: {what}" for what in entry.get("not_rehearsed") or ()),
    ]
    return "\n".join([head, *lines])
