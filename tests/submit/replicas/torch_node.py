"""A TrainJob node without torch: records its PET_* variables and meets the others at the master.

Usage: torch_node.py OUT [the job's args...]. Node 0 listens on
PET_MASTER_ADDR:PET_MASTER_PORT, as torchrun's static rendezvous store does;
every other node connects there and sends its PET_NODE_RANK. Node 0 records
the ranks it heard from, then succeeds, which ends the job.
"""

import json
import os
import socket
import sys
import time

out, args = sys.argv[1], sys.argv[2:]
env = {k: v for k, v in os.environ.items() if k.startswith(("PET_", "AIP_")) or k == "MODE"}
rank, nodes = int(env["PET_NODE_RANK"]), int(env["PET_NNODES"])
master = (env["PET_MASTER_ADDR"], int(env["PET_MASTER_PORT"]))
heard: list[int] = []
if rank == 0:
    with socket.create_server(master) as server:
        server.settimeout(60)
        while len(heard) < nodes - 1:
            conn, _ = server.accept()
            with conn:
                heard.append(int(conn.recv(16).decode()))
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(master, timeout=5) as conn:
                conn.sendall(str(rank).encode())
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit(f"node {rank}: nobody listens on {master}")
            time.sleep(0.05)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, f"node-{rank}.json"), "w") as f:
    json.dump({"env": env, "args": args, "heard": sorted(heard)}, f)
if rank:
    time.sleep(120)  # stopped when node 0 ends the job
