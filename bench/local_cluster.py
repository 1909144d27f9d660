"""What `vtrain local run` costs against a minimal hand-written launcher of the same processes.

    python bench/local_cluster.py [--replicas 8] [--runs 15] [--finish 0.2]

Two jobs, each run by both launchers, interleaved round by round:

- **train**: every other replica connects to the chief and trains on until the
  chief ends, then finishes its last step (--finish seconds) and exits 0 by itself;
- **serve**: every other replica is a parameter server: it serves through the
  plugin contract (`Plugin.prepare` -> `run_service`) until it is stopped.

Each job is split in two: start -> the chief's exit (the launcher starts every
replica; the chief exits once all have connected), and the chief's exit -> all
gone (the launcher has exited, every replica reaped). The hand-written launcher
is `subprocess.Popen` with CLUSTER_SPEC, each replica in a session of its own as
vtrain's are; it waits for every replica of the training job, and terminates the
servers as soon as the chief exits. Figures are medians; a start ratio is given
both as the median of the rounds' own ratios and as the ratio of the medians
(bench/compare.py).

Each job also runs under `vtrain local run --shared-disk`: separate disks and addresses
(issue 28) must keep start -> chief exit within 1.1x of the shared-disk rehearsal's.

Each launcher reruns each job in an --output-dir of its own, as a person rerunning a
rehearsal does: vtrain keeps the disks its last run left as it made them. With --fresh,
every run gets a new --output-dir instead, as `vtrain local run` without one does (its
default folder is named for the job): every folder, log and disk is made anew.

Targets (issue 31): start -> chief exit at most 1.2x the hand-written launcher's;
the serving job's teardown within 100 ms; the training job's within the time its
other replicas take to finish after the chief + 50 ms.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from compare import report, report_ratio  # noqa: E402

# The replica: its place comes from CLUSTER_SPEC (Vertex's workerpools), from either launcher.
# argv: STAMPS MODE FINISH. Each replica writes the time it exits to STAMPS/<pool>-<index>.
REPLICA = r"""
import json, os, socket, sys, time
stamps, mode, finish = sys.argv[1], sys.argv[2], float(sys.argv[3])
spec = json.loads(os.environ["CLUSTER_SPEC"])
host, port = spec["cluster"]["workerpool0"][0].rsplit(":", 1)
me = f"{spec['task']['type']}-{spec['task']['index']}"

def stamp():
    with open(os.path.join(stamps, me), "w") as f:
        f.write(repr(time.time()))

def connect():
    while True:
        try:
            return socket.create_connection((host, int(port)))
        except OSError:
            time.sleep(0.005)

if spec["task"]["type"] == "workerpool0":
    n = sum(len(a) for a in spec["cluster"].values())
    with socket.create_server((host, int(port))) as s:
        s.settimeout(60)  # a replica that failed fails the bench, not hangs it
        peers = [s.accept()[0] for _ in range(n - 1)]
    stamp()
    os._exit(0)  # the peers see the end of their connection as the chief's exit
if mode == "train":
    conn = connect()
    conn.recv(1)  # training, until the chief is done
    time.sleep(finish)  # the last step
    stamp()
    os._exit(0)  # at once, so that the stamp is the moment it ends

import threading
from vtrain.plugins.base import Plugin

class Bench(Plugin):
    name = "bench"
    serving_roles = frozenset({"ps"})

    def serves(self, info, **options):
        return info.role == "ps"

    def serve(self, info, stopped, **options):
        connect()
        stopped.wait()

    def configure(self, **options):
        raise AssertionError("only servers and the chief here")

Bench().prepare(None, None)
"""

# The minimal launcher, run as `python -c HAND N REPLICA STAMPS MODE FINISH` so that it
# imports no more than it needs: free ports, CLUSTER_SPEC, Popen, wait. Its replicas get
# sessions of their own as vtrain's do: on a busy machine the kernel's autogroup scheduler
# gives each session its own share of the CPU, which would otherwise favour one side.
HAND = r"""
import json, os, socket, subprocess, sys
n, (replica, stamps, mode, finish) = int(sys.argv[1]), sys.argv[2:]
ports = []
for _ in range(n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
others = "workerpool1" if mode == "train" else "workerpool2"
addresses = [f"127.0.0.1:{p}" for p in ports]
cluster = {"workerpool0": addresses[:1], others: addresses[1:]}
procs = []
for rank in range(n):
    task = {"type": "workerpool0", "index": 0} if rank == 0 else {"type": others, "index": rank - 1}
    env = dict(os.environ, CLUSTER_SPEC=json.dumps({"cluster": cluster, "task": task}))
    procs.append(subprocess.Popen([sys.executable, "-c", replica, stamps, mode, finish], env=env,
                                  stdout=subprocess.DEVNULL, start_new_session=True))
status = procs[0].wait()
for p in procs[1:]:
    if mode == "serve":
        p.terminate()
for p in procs[1:]:
    p.wait()
sys.exit(status)
"""

HAND_NAME, VTRAIN_NAME = "hand-written", "vtrain local run"
# Today's rehearsal against the one before separate disks and addresses (issue 28: <= 1.1x).
SHARED_NAME = "vtrain --shared-disk"


def command(launcher: str, mode: str, args: argparse.Namespace, stamps: str, out: str) -> list[str]:
    """The command line that runs job `mode` under `launcher`."""
    job = [REPLICA, stamps, mode, str(args.finish)]
    if launcher == HAND_NAME:
        return [sys.executable, "-c", HAND, str(args.replicas), *job]
    others = "--workers" if mode == "train" else "--ps"
    shared = ["--shared-disk"] if launcher == SHARED_NAME else []
    return [
        *(sys.executable, "-m", "vtrain", "local", "run", others, str(args.replicas - 1)),
        *(*shared, "--output-dir", out, "--", sys.executable, "-c", *job),
    ]


def measure(cmd: list[str], stamps: str) -> tuple[float, float, float]:
    """(start -> chief exit, chief exit -> all gone, chief exit -> last other replica's exit)."""
    for name in os.listdir(stamps):
        os.unlink(os.path.join(stamps, name))
    start = time.time()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    end = time.time()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])[:200]}... failed: {done.stderr}")
    times = {name: float(Path(stamps, name).read_text()) for name in os.listdir(stamps)}
    chief = times.pop("workerpool0-0")
    others = max(times.values(), default=chief) - chief
    return chief - start, end - chief, others


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--finish", type=float, default=0.2, help="the trainers' last step, s")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement here")
    parser.add_argument(
        "--fresh", action="store_true", help="a new --output-dir for every run (see above)"
    )
    args = parser.parse_args()

    # Byte-compile vtrain as a wheel install does; without it (PYTHONDONTWRITEBYTECODE) every
    # run would compile vtrain from source and the bench would measure the compiler.
    import vtrain

    compileall.compile_dir(os.path.dirname(vtrain.__file__), quiet=1)
    load = os.getloadavg()[0]  # what others run: the bench's own runs add about 2
    modes = ("train", "serve")
    launchers = (HAND_NAME, VTRAIN_NAME, SHARED_NAME)
    found: dict[str, dict[str, list[tuple[float, float, float]]]] = {
        m: {name: [] for name in launchers} for m in modes
    }
    with tempfile.TemporaryDirectory() as tmp:
        stamps = os.path.join(tmp, "stamps")
        os.mkdir(stamps)
        for run in range(args.runs):
            for mode in modes:
                # Alternate who goes first: a round's second run finds a warmer machine.
                for name in launchers if run % 2 == 0 else launchers[::-1]:
                    # The launcher's own folder for this job; with --fresh, one per run.
                    out = f"out-{launchers.index(name)}-{mode}" + (f"-{run}" if args.fresh else "")
                    cmd = command(name, mode, args, stamps, os.path.join(tmp, out))
                    found[mode][name].append(measure(cmd, stamps))

    where = "a new --output-dir each run" if args.fresh else "each job rerun in one --output-dir"
    print(
        f"{args.replicas} replicas, {args.runs} interleaved runs, {os.cpu_count()} cores, "
        f"load average {load:.2f} before the runs, {where}"
    )
    for mode in modes:
        what = "trainers finish" if mode == "train" else "servers are stopped"
        print(f"\n{mode} job (after the chief, the {what}):")
        starts = {name: [r[0] * 1000 for r in found[mode][name]] for name in launchers}
        report(
            "  start -> chief exit",
            starts,
            unit="ms",
            ours=VTRAIN_NAME,
            theirs=HAND_NAME,
            target="<= 1.2x",
            paired=True,
        )
        report_ratio(starts, ours=VTRAIN_NAME, theirs=HAND_NAME, target="<= 1.2x")
        report_ratio(starts, ours=VTRAIN_NAME, theirs=SHARED_NAME, target="<= 1.1x", paired=True)
        for name in launchers:
            teardowns = [r[1] * 1000 for r in found[mode][name]]
            print(
                f"  chief exit -> all gone, {name:<17}{statistics.median(teardowns):7.1f} ms "
                f"(worst {max(teardowns):.1f} ms)"
            )
        ours = found[mode][VTRAIN_NAME]
        teardown = statistics.median(r[1] * 1000 for r in ours)
        if mode == "serve":
            print(f"  vtrain's teardown: {teardown:.1f} ms (target <= 100 ms)")
        else:
            others = statistics.median(r[2] * 1000 for r in ours)
            print(
                f"  vtrain's teardown: {teardown:.1f} ms; the trainers took {others:.1f} ms "
                f"after the chief: {teardown - others:+.1f} ms (target <= +50 ms)"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
