"""The `local-disk` check: what a replica left on its own machine that others needed.

On the platform a replica's machine is all of its local paths: its working
folder, HOME, TMPDIR, and also the host's /tmp, an absolute home, the image's
own folders. Only the shared places outlive it and reach its peers. Here those
paths are one host's, so a restart or a peer can read what on the platform is
gone or out of reach. Three kinds of finding:

- a file written on one run's machine and read by another run: a peer, or the
  same replica's restart (a new machine on the platform);
- a model or checkpoint left on a run's machine that nothing read back: lost
  with the machine. A copy of a file the run read (pretrained weights copied to
  scratch) is no finding: its source is still there for the next machine;
- a file a run looked for and did not find, which another run wrote on its own
  disk (here each run's disk is a folder of its own, so the read fails as there).
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import re

from vtrain.local.checks.places import SHARED, model_like, relative, where
from vtrain.local.evidence import Evidence, Run
from vtrain.local.verdict import Finding

# The names of vtrain's own folders: CheckpointManager's, and vtrain.storage.staging's for
# each of its KINDS (named here: that module loads dataclasses, 30 ms of every verdict).
_OWN = ("vtrain-checkpoints-", "vtrain-stage-", "vtrain-save-", "vtrain-restore-")
_MISSING = re.compile(r"No such file or directory: '([^']+)'")


def local_disk(ev: Evidence) -> list[Finding]:
    """The findings above, in the order of the runs."""
    local = {run_key(r): _local_writes(ev, r) for r in ev.runs}
    read_elsewhere: set[str] = set()
    findings = []
    for run in ev.runs:
        for path in _reads(run):
            writer = _writer(ev, local, run, path)
            if writer is None:
                continue
            read_elsewhere.add(path)
            whose = (
                f"its previous run ({writer.number})" if writer.name == run.name else writer.name
            )
            findings.append(
                Finding(
                    "local-disk",
                    run.name,
                    f"read {path}, which {whose} wrote on its own machine: on the platform "
                    + (
                        "a restart is a new machine, and it starts without it"
                        if writer.name == run.name
                        else "another machine's disk is out of reach"
                    ),
                    f"write it to {SHARED} and read it from there",
                )
            )
    for run in ev.runs:
        looks = [
            p
            for p in local[run_key(run)]
            if p not in read_elsewhere and model_like(p) and not _copied(run, p)
        ]
        if looks:
            shown = ", ".join(looks[:3]) + (f" and {len(looks) - 3} more" if len(looks) > 3 else "")
            findings.append(
                Finding(
                    "local-disk",
                    run.name,
                    f"wrote {shown} on its own machine (run {run.number}): on the platform that "
                    "disk is lost with the machine, and a restart starts without it",
                    f"save models and checkpoints to {SHARED}",
                )
            )
    findings.extend(_missing(ev))
    return findings


def run_key(run: Run) -> tuple[str, int]:
    return (run.name, run.number)


def _local_writes(ev: Evidence, run: Run) -> list[str]:
    """Every file `run` left on its own machine, by absolute path: listed on its disk, and
    seen written anywhere else that is neither shared nor vtrain's."""
    found: dict[str, None] = {}
    if run.disk is not None:
        for rel in run.written:
            found[os.path.join(run.disk.folder, rel)] = None
    for kind, path in run.seen:
        if kind == "write" and where(ev, path) == "local":
            found[path] = None
    return [p for p in found if not _vtrains(p)]


def _reads(run: Run) -> list[str]:
    """What `run` read before, if ever, writing it itself."""
    wrote: set[str] = set()
    found = []
    for kind, path in run.seen:
        if kind == "write":
            wrote.add(path)
        elif kind == "read" and path not in wrote:
            found.append(path)
    return found


def _writer(
    ev: Evidence, local: dict[tuple[str, int], list[str]], reader: Run, path: str
) -> Run | None:
    """The other run that left `path` on its own machine, if one did."""
    for run in ev.runs:
        if run is reader:
            continue
        if path in local[run_key(run)]:
            return run
    return None


def _vtrains(path: str) -> bool:
    """A folder vtrain keeps for itself on a replica's machine: a non-leader's checkpoints, a
    save's staging folder (not any folder named vtrain-: ./vtrain-output is the user's)."""
    return any(part.startswith(_OWN) for part in path.split(os.sep))


def _copied(run: Run, path: str) -> bool:
    """Whether `path` holds the same bytes as a file `run` read: a copy of an input."""
    with contextlib.suppress(OSError):
        size = os.path.getsize(path)
        for kind, source in run.seen:
            if kind != "read" or source == path:
                continue
            with contextlib.suppress(OSError):
                if os.path.getsize(source) == size and filecmp.cmp(source, path, shallow=False):
                    return True
    return False


def _missing(ev: Evidence) -> list[Finding]:
    """A file a run could not find, which another run wrote on its own disk."""
    findings = []
    for run in ev.runs:
        for missing in {m for line in run.tail for m in _MISSING.findall(line)}:
            rel = relative(run, missing)
            if rel is None:
                continue
            writers = [other for other in ev.runs if other is not run and rel in other.written]
            if writers:
                who = writers[0]
                whose = "its previous run" if who.name == run.name else who.name
                findings.append(
                    Finding(
                        "local-disk",
                        run.name,
                        f"could not find {missing}, which {whose} wrote on its own disk "
                        f"({os.path.join(who.disk.folder if who.disk else '', rel)}): "
                        "on the platform another machine's disk is out of reach",
                        f"write it to {SHARED} and read it from there",
                    )
                )
    return findings
