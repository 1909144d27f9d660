"""The verdict's six checks, one function each, over what the rehearsal saw (`Evidence`).

Each returns the findings of its check: `local-disk`, `loopback`, `leader`,
`metric`, `resume`, `args` (`vtrain.local.verdict.CHECKS`).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable

from vtrain.hypertune.metric_file import RESERVED_KEYS, read_entries
from vtrain.local.evidence import Evidence, Run
from vtrain.local.verdict import Finding, Verdict

SHARED = "a shared place (AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, /gcs/ or gs://)"
# What a model or a checkpoint is saved as, by the frameworks vtrain runs.
_MODEL_SUFFIXES = frozenset(
    {
        ".pt",
        ".pth",
        ".ckpt",
        ".keras",
        ".h5",
        ".hdf5",
        ".params",
        ".safetensors",
        ".ubj",
        ".bst",
        ".joblib",
        ".pb",
        ".index",
        ".msgpack",
    }
)
_MODEL_WORDS = re.compile(r"checkpoint|ckpt|saved_model", re.IGNORECASE)
# Caches a framework fills by itself (downloaded weights, compiled kernels): not the job's.
_CACHES = ("home/.cache/", "home/.keras/", "home/.nv/", "home/.triton/")
_MISSING = re.compile(r"No such file or directory: '([^']+)'")
_STEP_ZERO = re.compile(r"\bstep\s*[:=#]?\s*0\b", re.IGNORECASE)


def _model_like(path: str) -> bool:
    if path.startswith(_CACHES) or "__pycache__" in path:
        return False
    base = os.path.basename(path)
    return os.path.splitext(base)[1].lower() in _MODEL_SUFFIXES or bool(_MODEL_WORDS.search(path))


def local_disk(ev: Evidence) -> list[Finding]:
    """Model- or checkpoint-looking files on a replica's own disk, and files a peer or a later
    run of the same replica looked for there."""
    findings = []
    for run in ev.runs:
        looks = [p for p in run.written if _model_like(p)]
        if looks:
            shown = ", ".join(looks[:3]) + (f" and {len(looks) - 3} more" if len(looks) > 3 else "")
            findings.append(
                Finding(
                    "local-disk",
                    run.name,
                    f"wrote {shown} on its own disk (run {run.number}): on Vertex that disk is "
                    "lost with the machine, and a restart starts without it",
                    f"save models and checkpoints to {SHARED}",
                )
            )
    for run in ev.runs:
        for missing in {m for line in run.tail for m in _MISSING.findall(line)}:
            rel = _relative(run, missing)
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
                        "on Vertex another machine's disk is out of reach",
                        f"write it to {SHARED} and read it from there",
                    )
                )
    return findings


def _relative(run: Run, path: str) -> str | None:
    """`path` as a run's disk names it (``work/data.bin``), or None when it is elsewhere."""
    disk = run.disk
    if disk is None:
        return None
    if not os.path.isabs(path):
        return os.path.normpath(os.path.join("work", path))
    folder = os.path.dirname(disk.folder)  # <disks>/<name>: any run of any replica is below
    root = os.path.dirname(folder)
    if path.startswith(root + os.sep):
        parts = os.path.relpath(path, root).split(os.sep)
        return os.path.join(*parts[2:]) if len(parts) > 2 else None
    return None


def _hostname_addresses() -> set[str]:
    """What this machine's name resolves to (Debian: 127.0.1.1): gloo listens there, and on
    Vertex that is the machine's own address."""
    try:
        return set(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        return set()


def loopback(ev: Evidence) -> list[Finding]:
    """Listening on a loopback address other than the replica's own where a peer needed it, and
    connecting to 127.0.0.1 for a peer."""
    if not ev.separate_hosts:
        return []
    listens: dict[str, set[tuple[str, int]]] = {}
    connects: dict[str, set[tuple[str, int]]] = {}
    # /proc shows the address a socket got, not the one asked for: native code that listens
    # on what the machine's name resolves to (gloo does) is right on Vertex, even where the
    # name resolves to 127.0.0.1 here. The probe sees Python's own request, "127.0.0.1" or
    # "localhost" as written, so only its requests are held to the strict rule.
    ambiguous = _hostname_addresses() | {"0.0.0.0", "::", ""}
    for name, kind, local, remote in ev.sockets:
        host, port = _split(local if kind == "listen" else remote)
        if host not in ambiguous:
            (listens if kind == "listen" else connects).setdefault(name, set()).add((host, port))
    for run in ev.runs:
        for kind, value in run.probed():
            if kind in ("bind", "connect"):
                host, port = _split(value)
                host = "127.0.0.1" if host == "localhost" else host
                if kind == "bind" and port == 0:
                    continue  # a free port looked for, or a client's own end
                (listens if kind == "bind" else connects).setdefault(run.name, set()).add(
                    (host, port)
                )
    cluster_ports = {port: name for name, port in ev.ports.items()}
    findings = []
    for name, found in sorted(listens.items()):
        for host, port in sorted(found):
            if not host.startswith("127.") or host == ev.hosts.get(name):
                continue
            wanted = cluster_ports.get(port) == name or any(
                port == p for peer, addrs in connects.items() if peer != name for _, p in addrs
            )
            if wanted:
                findings.append(
                    Finding(
                        "loopback",
                        name,
                        f"listened on {host}:{port}, not on its cluster address "
                        f"{ev.hosts.get(name)}: on Vertex its peers, other machines, cannot reach "
                        "it there",
                        "listen on the host the cluster variables name for this replica, "
                        "or on 0.0.0.0",
                    )
                )
    peer_ports = {
        port: peer for peer, addrs in listens.items() for _, port in addrs
    } | cluster_ports
    for name, found in sorted(connects.items()):
        for host, port in sorted(found):
            peer = peer_ports.get(port)
            if host == "127.0.0.1" and peer is not None and peer != name:
                findings.append(
                    Finding(
                        "loopback",
                        name,
                        f"connected to {host}:{port} to reach {peer}: on Vertex {peer} is "
                        f"another machine (here {ev.hosts.get(peer)})",
                        "connect to the address the cluster variables give "
                        "(CLUSTER_SPEC, TF_CONFIG, MASTER_ADDR)",
                    )
                )
    return findings


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return host, -1


def leader(ev: Evidence) -> list[Finding]:
    """The model written into one place by more than one replica, or by none; the metric
    reported by others but not by the chief, whose report the tuning service reads."""
    writers: dict[str, list[str]] = {}
    for run in ev.runs:
        for kind, path in run.probed():
            if kind == "write" and run.name not in writers.setdefault(path, []):
                writers[path].append(run.name)
    rank = {name: n for n, name in enumerate(ev.hosts)}
    findings = []
    for path, found in sorted(writers.items()):
        names = sorted(found, key=lambda name: rank.get(name, len(rank)))
        for name in names[1:]:
            findings.append(
                Finding(
                    "leader",
                    name,
                    f"wrote {path}, which {names[0]} wrote too: on Vertex they overwrite "
                    "each other's model",
                    "save the model from the chief only (vtrain: `if handle.is_chief:`)",
                )
            )
    if ev.succeeded and not _has_files(ev.model_dir):
        findings.append(
            Finding(
                "leader",
                next(iter(ev.hosts)),
                f"no replica wrote the model into AIP_MODEL_DIR ({ev.model_dir}): the job "
                "would end with nothing to deploy",
                "save the model there from the chief",
            )
        )
    if ev.metric_id:
        chief = next(iter(ev.hosts))
        reported = [n for n, path in ev.metric_files.items() if _tags(path)]
        if reported and chief not in reported:
            findings.append(
                Finding(
                    "leader",
                    reported[0],
                    "reported the study's metric, but the chief did not: the tuning service "
                    "reads the chief's (workerpool0's)",
                    "report the metric from the chief",
                )
            )
    return findings


def _has_files(folder: str) -> bool:
    return any(files for _, _, files in os.walk(folder))


def _tags(path: str) -> set[str]:
    try:
        entries = read_entries(path)
    except OSError:
        return set()
    return {k for e in entries for k in e if k not in RESERVED_KEYS}


def metric(ev: Evidence) -> list[Finding]:
    """The study's metric id never reported, or reported only under other tags."""
    if not ev.metric_id:
        return []
    seen: set[str] = set()
    for path in ev.metric_files.values():
        seen |= _tags(path)
    if ev.metric_id in seen:
        return []
    others = f" (tags seen: {', '.join(sorted(seen))})" if seen else " (nothing was reported)"
    return [
        Finding(
            "metric",
            next(iter(ev.hosts)),
            f"the study's metric {ev.metric_id!r} was never reported{others}: every trial "
            "would end without a value",
            f"report it under {ev.metric_id!r} (vtrain: `handle.report({ev.metric_id!r}, value)`)",
        )
    ]


def resume(ev: Evidence) -> list[Finding]:
    """A replica restarted after --kill that started over while checkpoints existed."""
    findings = []
    for run in ev.runs:
        if run.after_kill is None or run.committed is None:
            continue
        if any(_STEP_ZERO.search(line) for line in run.head):
            what = (
                f"step {run.committed} was committed"
                if run.committed >= 0
                else "checkpoint files existed"
            )
            findings.append(
                Finding(
                    "resume",
                    run.name,
                    f"restarted after --kill {run.after_kill} and started at step 0 while "
                    f"{what} in AIP_CHECKPOINT_DIR ({ev.checkpoint_dir})",
                    "resume from the newest checkpoint at start (vtrain: `handle.resume()`)",
                )
            )
    return findings


def args(ev: Evidence) -> list[Finding]:
    """A script that refused the arguments the platform passes (a usage error, exit 2)."""
    return [
        Finding(
            "args",
            run.name,
            f"refused its arguments ({run.refused})",
            "accept the flags the platform passes (--job-dir, the study's parameters): "
            "declare them, or use parse_known_args()",
        )
        for run in ev.runs
        if run.refused
    ]


CHECKERS: tuple[Callable[[Evidence], list[Finding]], ...] = (
    local_disk,
    loopback,
    leader,
    metric,
    resume,
    args,
)


def judge(ev: Evidence, notes: tuple[str, ...] = ()) -> Verdict:
    """Every check's findings over `ev`."""
    return Verdict(tuple(f for check in CHECKERS for f in check(ev)), notes)
