"""Crash harness: a child saves checkpoints in a loop; the parent SIGKILLs it at random moments.

Run as a script it is the child (`crash_child.py CONFIG_JSON`): it resumes from
the latest committed step, as a restarted replica does, and saves step after
step, printing "saved N" once step N is committed. Imported, `run_kills` is the
parent, shared by the test suite (20 kills) and bench/checkpoint_crash.py (200).

With `"async": true` in the config the child saves with `blocking=False` and
scribbles over its buffers as soon as `save` returns, as a training loop goes
on changing its state: a restore that saw the scribbles would fail the check.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def expected(step: int) -> dict[str, bytes]:
    """The files of `step`: sizes and content differ per step, so a mix-up is caught."""
    rng = random.Random(step)
    return {
        "model.bin": rng.randbytes(rng.randrange(1 << 20, 3 << 20)),
        "opt/state.bin": rng.randbytes(rng.randrange(0, 200_000)),
        "step.txt": str(step).encode(),
    }


def _payload(step: int) -> tuple[Any, list[bytearray]]:
    """What to save for `step`, and the buffers a training loop would go on changing."""
    files = {name: bytearray(data) for name, data in expected(step).items()}
    kind = step % 3
    if kind == 0:
        return files, list(files.values())
    if kind == 1:  # a bytes save holds the files as one JSON-framed blob
        blob = bytearray(_pack({k: bytes(v) for k, v in files.items()}))
        return blob, [blob]

    def write(folder: str) -> None:
        for name, data in files.items():
            Path(folder, name).parent.mkdir(parents=True, exist_ok=True)
            Path(folder, name).write_bytes(data)

    return write, list(files.values())


def _scribble(buffers: list[bytearray]) -> None:
    for buffer in buffers:
        buffer[:] = b"\xee" * len(buffer)


def _pack(files: dict[str, bytes]) -> bytes:
    header = json.dumps({k: len(v) for k, v in files.items()}).encode()
    return len(header).to_bytes(4, "big") + header + b"".join(files.values())


def _unpack(blob: bytes | bytearray) -> dict[str, bytes]:
    size = int.from_bytes(blob[:4], "big")
    lengths = json.loads(bytes(blob[4 : 4 + size]))
    out, pos = {}, 4 + size
    for name, length in lengths.items():
        out[name] = bytes(blob[pos : pos + length])
        pos += length
    return out


def contents(ckpt: Any) -> dict[str, bytes]:
    """The files of a restored checkpoint, whichever way it was saved."""
    if ckpt.manifest.kind == "bytes":
        return _unpack(ckpt.data)
    if ckpt.manifest.kind == "files":
        return {k: bytes(v) for k, v in ckpt.files.items()}
    return {e.name: Path(ckpt.directory, e.name).read_bytes() for e in ckpt.manifest.files}


def manager(config: dict[str, Any]) -> Any:
    """The manager both sides use, from a JSON-ready config."""
    from vtrain.checkpoints import CheckpointManager

    return CheckpointManager(
        config["uri"],
        is_leader=True,
        keep=config.get("keep"),
        keep_every=config.get("keep_every"),
        environ=config.get("environ", {}),
        gcs_mount=config.get("gcs_mount"),
        fuse=config.get("fuse"),
    )


def child(config: dict[str, Any]) -> None:
    """Save forever, resuming after the latest committed step."""
    m = manager(config)
    latest = m.latest_step()
    step = 0 if latest is None else latest + 1
    print("ready", flush=True)
    if not config.get("async"):
        while True:
            m.save(step, _payload(step)[0])
            print(f"saved {step}", flush=True)
            step += 1
    while True:
        payload, buffers = _payload(step)
        m.save(step, payload, blocking=False)  # waits for step - 1 first: committed now
        if step > 0:
            print(f"saved {step - 1}", flush=True)
        _scribble(buffers)
        step += 1


@dataclass
class Report:
    """What a run of kills saw."""

    kills: int = 0
    steps_committed: int = 0
    mid_save_kills: int = 0
    """Kills after which the step being written was not committed (the kill hit a save)."""
    seconds: float = 0.0


def run_kills(config: dict[str, Any], kills: int, *, seed: int, max_delay: float = 0.25) -> Report:
    """Start, SIGKILL and check the child `kills` times; AssertionError on any bad state."""
    rng = random.Random(seed)
    reader = manager(config)
    report = Report()
    start = time.monotonic()
    # A killed child cannot remove its temporary folders: give it one that we remove.
    scratch = tempfile.mkdtemp(prefix="vtrain-crash-scratch-")
    env = dict(os.environ, PYTHONUNBUFFERED="1", TMPDIR=scratch)
    try:
        _kill_and_check(config, kills, rng, max_delay, env, reader, report)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report.seconds = time.monotonic() - start
    return report


def _kill_and_check(
    config: dict[str, Any],
    kills: int,
    rng: random.Random,
    max_delay: float,
    env: dict[str, str],
    reader: Any,
    report: Report,
) -> None:
    last_committed: int | None = None
    for _ in range(kills):
        process = subprocess.Popen(
            [sys.executable, __file__, json.dumps(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first == b"ready\n", (first, process.stderr.read() if process.stderr else b"")
        time.sleep(rng.uniform(0, max_delay))
        process.send_signal(signal.SIGKILL)
        out, err = process.communicate()
        assert process.returncode == -signal.SIGKILL, (process.returncode, err.decode())
        saved = [int(line.split()[1]) for line in out.decode().splitlines() if line]
        report.kills += 1

        latest = reader.latest_step()
        printed = saved[-1] if saved else last_committed
        # The kill may land after a commit and before its "saved" line: one step ahead is
        # fine; two with background saves, where the next one may commit before the line.
        ahead = 2 if config.get("async") else 1
        start = -1 if printed is None else printed
        allowed = {printed, *range(start + 1, start + 1 + ahead)}
        assert latest in allowed, f"latest {latest}, last printed {printed}"
        assert last_committed is None or (latest is not None and latest >= last_committed)
        if latest == printed:
            report.mid_save_kills += 1
        ckpt = reader.restore()
        assert (ckpt is None) == (latest is None)
        if ckpt is not None:
            with ckpt:
                assert ckpt.step == latest
                assert contents(ckpt) == expected(ckpt.step), f"step {ckpt.step} differs"
        # Every committed step this run could have written or deleted is whole, not only the newest.
        touched = [s for s in reader.steps() if last_committed is None or s >= last_committed - 2]
        for step in touched:
            older = reader.restore(step)
            assert older is not None
            with older:
                assert contents(older) == expected(step)
        last_committed = latest
    report.steps_committed = 0 if last_committed is None else last_committed + 1


if __name__ == "__main__":
    child(json.loads(sys.argv[1]))
