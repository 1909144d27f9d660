"""A plain-Python replica for the `vtrain local run` tests; no framework, no vtrain import.

It works out who it is from the platform's own variables, records its start
(pid, process group, address) and its environment under OUT, binds its own
address, and then, unless told otherwise, meets the chief over TCP: the chief
waits for a hello from every other replica, the others connect and say hello.

    replica.py OUT [--linger ROLE ...] [--ignore-term] [--term-exits-0] [--fork]
                   [--fail NAME:N] [--hang-first NAME] [--chief-hang] [--info]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time


def whoami() -> tuple[str, int, list[str], str]:
    """(role, index, every other replica's name, the chief's host:port)."""
    if "CLUSTER_SPEC" in os.environ:
        spec = json.loads(os.environ["CLUSTER_SPEC"])
        roles = {
            "workerpool0": "chief",
            "workerpool1": "worker",
            "workerpool2": "ps",
            "workerpool3": "evaluator",
            "master": "chief",
        }
        role = roles.get(spec["task"]["type"], spec["task"]["type"])
        cluster = {roles.get(k, k): v for k, v in spec["cluster"].items()}
    elif "TF_CONFIG" in os.environ:
        spec = json.loads(os.environ["TF_CONFIG"])
        role = spec["task"]["type"]
        cluster = spec["cluster"]
    else:  # torchrun, or a one-replica Kubeflow job: only trainers, named by rank
        rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        chief = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
        names = ["chief-0"] + [f"worker-{i}" for i in range(size - 1)]
        me = names[rank]
        return me.split("-")[0], int(me.split("-")[1]), [n for n in names if n != me], chief
    index = spec["task"]["index"]
    names = [f"{r}-{i}" for r, addrs in cluster.items() for i in range(len(addrs))]
    return role, index, [n for n in names if n != f"{role}-{index}"], cluster["chief"][0]


def connect(chief: str, me: str = "") -> str:
    """Say hello to the chief (retrying until it listens); its reply, or "" to say nothing."""
    host, port = chief.rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                if not me:
                    return ""
                conn.sendall(f"{me}\n".encode())
                return conn.makefile().readline().strip()
        except OSError:
            time.sleep(0.05)


def on_term(out: str, me: str, takes: float = 0.0) -> None:
    """On SIGTERM, note it under OUT/terms and exit 0, as a job saving its state would.

    `takes` seconds pass between the signal and the note: a commit that takes a while.
    """

    def handler(signum: int, frame: object) -> None:
        time.sleep(takes)
        os.makedirs(os.path.join(out, "terms"), exist_ok=True)
        with open(os.path.join(out, "terms", me), "a") as f:
            f.write("TERM\n")
        os._exit(0)

    signal.signal(signal.SIGTERM, handler)


def sleep_forever() -> None:
    while True:
        time.sleep(60)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--linger", nargs="*", default=[])
    p.add_argument("--ignore-term", action="store_true")
    p.add_argument("--fork", action="store_true")
    p.add_argument("--fail", default="")
    p.add_argument("--hang-first", default="")
    p.add_argument("--chief-hang", action="store_true")
    p.add_argument("--term-exits-0", action="store_true")
    p.add_argument("--term-takes", type=float, default=0.0, help="seconds its SIGTERM save takes")
    p.add_argument("--info", action="store_true", help="print `vtrain info --json` first")
    p.add_argument("--job-dir", help="AI Platform's jobDir, which every script must accept")
    a = p.parse_args()
    role, index, others, chief = whoami()
    me = f"{role}-{index}"
    if a.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if a.term_exits_0:
        on_term(a.out, me, a.term_takes)

    # Our own address, from the platform variables (torchrun gives only the chief's).
    address = None
    if "CLUSTER_SPEC" in os.environ or "TF_CONFIG" in os.environ:
        spec = json.loads(os.environ.get("CLUSTER_SPEC") or os.environ["TF_CONFIG"])
        cluster = spec["cluster"]
        key = spec["task"]["type"]
        address = cluster[key][index] if key in cluster else None
    if role == "chief":
        address = chief
    child = None
    if a.fork:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    starts = os.path.join(a.out, "starts", me)
    os.makedirs(os.path.dirname(starts), exist_ok=True)
    with open(starts, "a") as f:
        record = {
            "pid": os.getpid(),
            "pgid": os.getpgid(0),
            "address": address,
            "child": child.pid if child else None,
        }
        f.write(json.dumps(record) + "\n")
    with open(starts) as f:
        count = len(f.readlines())
    os.makedirs(os.path.join(a.out, "env"), exist_ok=True)
    with open(os.path.join(a.out, "env", me + ".json"), "w") as f:
        json.dump(dict(os.environ), f)
    print(f"{me} start {count} at {address}", flush=True)

    server = None
    if address:
        host, port = address.rsplit(":", 1)
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, int(port)))  # fails, and the replica with it, if the port is taken
        server.listen(16)

    if a.info:
        info = subprocess.run(
            [sys.executable, "-m", "vtrain", "info", "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        print(info.stdout.strip(), flush=True)
    if a.fail:
        name, times = a.fail.split(":")
        if name == me and count <= int(times):
            connect(chief)  # fail only once the chief is up, so that a job restart restarts it
            print(f"{me} fails on purpose", flush=True)
            if count > 1:
                # A repeat of an immediate failure is not restarted (a command that cannot
                # start); this one stands for a replica that failed after it had run.
                time.sleep(1.1)
            return 3
    if a.hang_first == me and count < 2:
        sleep_forever()

    if role == "chief":
        assert server is not None
        if a.chief_hang:
            sleep_forever()
        waiting = set(others)
        while waiting:
            conn, _ = server.accept()
            try:
                with conn:
                    name = conn.makefile().readline().strip()
                    conn.sendall(b"ok\n")
            except OSError:  # a replica that only checked we are up, then left
                continue
            waiting.discard(name)
            print(f"chief-0 heard from {name}", flush=True)
        return 0

    reply = connect(chief, me)
    print(f"{me} got {reply}", flush=True)
    if role in a.linger:
        sleep_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
