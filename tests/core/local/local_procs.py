"""Process helpers for the `vtrain local` tests: where things are, and what is still alive."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

MARK = "VTRAIN_LOCAL_TEST_MARK"
REPLICA = str(Path(__file__).parent / "replicas" / "replica.py")
VTRAIN = [sys.executable, "-m", "vtrain", "local", "run"]


def marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose environment carries the marker `mark`."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    """True while any live process is in process group `pgid`."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def starts(out: Path, name: str) -> list[dict[str, Any]]:
    """The start records replica `name` wrote, one per start."""
    path = out / "starts" / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]
