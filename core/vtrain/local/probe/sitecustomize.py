"""Put first on a rehearsed replica's PYTHONPATH: notes what the rehearsal's verdict needs.

An audit hook (PEP 578) writes one line per distinct event into the file
VTRAIN_LOCAL_RECORD names: ``write<TAB>PATH`` for a file opened for writing under
a folder VTRAIN_LOCAL_WATCH names (the model folder), ``bind<TAB>HOST:PORT`` and
``connect<TAB>HOST:PORT`` for IPv4 sockets. Each distinct event is written once, so
a training loop pays a dictionary look-up per audited call. The job's own
sitecustomize, if it has one, runs after it.

A Python open of a ``gs://`` URI (``open(os.path.join(os.environ["AIP_MODEL_DIR"], ...))``
with a gs:// output) is refused with the error Vertex gives, FileNotFoundError, and
noted as ``gs-open<TAB>URI``: on a machine where the folder ``gs:`` happens to exist
(a script that ran ``os.makedirs`` on the URI first) it would write there, and
on Vertex that folder is the machine's own disk, lost with it.
"""

from __future__ import annotations

import os
import sys


def _install() -> None:
    record = os.environ.get("VTRAIN_LOCAL_RECORD")
    if not record:
        return
    watched = tuple(p for p in os.environ.get("VTRAIN_LOCAL_WATCH", "").split(os.pathsep) if p)
    # A rehearsed bucket's /gcs/ view is a link: a write through it is named by where it lands,
    # as the watcher names it. Set only in a gs:// rehearsal; elsewhere nothing is resolved.
    mount = os.environ.get("VTRAIN_GCS_MOUNT") if watched else None
    views = (mount.rstrip("/") + "/",) if mount else ()
    seen: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # "fd": the record's descriptor; "busy": inside the hook

    def note(kind: str, value: str) -> None:
        if (kind, value) in seen:
            return
        seen.add((kind, value))
        state["busy"] = 1
        try:
            if "fd" not in state:
                state["fd"] = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(state["fd"], f"{kind}\t{value}\n".encode(errors="replace"))
        except OSError:
            pass
        finally:
            state["busy"] = 0

    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def hook(event: str, args: tuple[object, ...]) -> None:
        if state.get("busy"):
            return
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, (str, int)):
                path = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else path
            if isinstance(path, str) and path.startswith("gs:/"):
                note("gs-open", path)
                # Raised from the hook, it stops the open: the error is Vertex's, word for word.
                raise FileNotFoundError(2, os.strerror(2), path)
            if not watched or not isinstance(path, str):
                return
            if not (
                (isinstance(mode, str) and any(c in mode for c in "wax+"))
                or (isinstance(flags, int) and flags & writing)
            ):
                return
            full = os.path.abspath(path)
            if views and full.startswith(views):
                full = os.path.realpath(full)
            if full.startswith(watched):
                note("write", full)
        elif event in ("socket.bind", "socket.connect"):
            address = args[1]
            if isinstance(address, tuple) and len(address) == 2 and isinstance(address[0], str):
                note(event[7:], f"{address[0]}:{address[1]}")

    sys.addaudithook(hook)


def _chain() -> None:
    """Run the sitecustomize this one hides, as Python would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    # importlib.util costs more than the rest of a start-up: only a hidden one needs it.
    names = ("sitecustomize.py", "sitecustomize")
    if not any(os.path.exists(os.path.join(p or ".", n)) for p in path for n in names):
        return
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_install()
_chain()
