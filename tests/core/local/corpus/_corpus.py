"""What the corpus scripts share: where this replica is, its folders, and small writers.

Each script beside this one is a job; its first lines say which checks its
rehearsal must find (``# expect:``) and how it is rehearsed (``# run:``, ``# env:``,
``# args:``). test_verdict_corpus.py reads them.
"""

import ctypes
import os
import socket
import time

from vtrain import ClusterInfo

info = ClusterInfo.from_env()
chief = info.is_chief
MODEL_DIR = os.environ.get("AIP_MODEL_DIR", "")
CKPT_DIR = os.environ.get("AIP_CHECKPOINT_DIR", "")
_libc = ctypes.CDLL(None, use_errno=True)


def save_model(text: str = "weights") -> None:
    """The model, from the chief only, as the rule says."""
    if chief:
        with open(os.path.join(MODEL_DIR, "model.txt"), "w") as f:
            f.write(text)


def native_write(path: str, data: bytes) -> None:
    """Write `path` from C, as torch.save's writer does: Python's audit hook never sees it."""
    fd = _libc.open(path.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), path)
    _libc.write(fd, data, len(data))
    _libc.close(fd)


def host_tmp(name: str) -> str:
    """A path in the machine's own /tmp, hard-coded as scripts do (one folder per job)."""
    folder = os.path.join("/tmp", "vtrain-corpus-" + os.environ["CLOUD_ML_JOB_ID"])
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, name)


def wait_for(path: str, seconds: float = 3.0) -> bool:
    """True once `path` exists (a peer wrote it), False after `seconds`."""
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def chief_address() -> tuple[str, int]:
    host, port = (info.chief_address or "").rsplit(":", 1)
    return host, int(port)


def meet(host: str, port: int, seconds: float = 2.0) -> bool:
    """A worker's connection to the chief at (host, port): True once it answered."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def serve_once(host: str, port: int, seconds: float = 2.0) -> None:
    """The chief: accept one peer on (host, port), or give up after `seconds`."""
    with socket.create_server((host, port)) as server:
        server.settimeout(seconds)
        try:
            server.accept()[0].close()
        except TimeoutError:
            print("no peer came", flush=True)
