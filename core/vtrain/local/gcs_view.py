"""Where a rehearsed bucket's `/gcs/` view goes: `/gcs/BUCKET` itself, or a folder of the job's.

On Vertex every node mounts Cloud Storage FUSE at /gcs, and `/gcs/BUCKET/PATH`
is the object `gs://BUCKET/PATH`. The rehearsal has no FUSE: its view is a link,
`/gcs/BUCKET`, to the folder the emulator keeps the bucket's objects in
(`vtrain.local.bucket_store`). It makes /gcs only where nothing is there: a
real /gcs (a mount, another rehearsal's, anything of someone else's) is never
touched; a /gcs left by a rehearsal that was killed (its marker names a process
that is gone, and it holds only links) is taken over. Where /gcs cannot be made,
the view is `<output>/gcs/` and the replicas get it in VTRAIN_GCS_MOUNT (which
vtrain's storage reads); the verdict says that /gcs/ itself was not rehearsed.
Every link and folder made here is removed at the job's end.
"""

from __future__ import annotations

import contextlib
import os

from vtrain.storage.location import GCS_MOUNT_VARIABLE

GCS_ROOT = "/gcs"
MARKER = ".vtrain-local-run"
"""In a /gcs the rehearsal made: the pid of the `vtrain local run` that owns it."""

MAKE, TAKE_OVER, ELSEWHERE = "make", "take over", "elsewhere"


def choose(exists: bool, mount: bool, leftover: bool) -> str:
    """What to do with /gcs: make it, take over a killed rehearsal's, or put the view elsewhere."""
    if not exists:
        return MAKE
    if mount or not leftover:
        return ELSEWHERE  # someone's /gcs: a real mount, or a running rehearsal's
    return TAKE_OVER


class View:
    """The `/gcs/` view of one bucket: its root, and what was made for it (removed by `close`)."""

    def __init__(self, root: str, made_root: bool, why_elsewhere: str | None) -> None:
        self.root = root
        """Where the replicas find `BUCKET/PATH`: /gcs, or the job's own folder."""
        self.made_root = made_root
        self.why_elsewhere = why_elsewhere
        """Why /gcs was not used (for the verdict's `not checked`), or None."""
        self.links: list[str] = []

    @property
    def variables(self) -> dict[str, str]:
        """What a replica needs to find the view: VTRAIN_GCS_MOUNT, its root."""
        return {GCS_MOUNT_VARIABLE: self.root}

    def close(self) -> None:
        """Remove the links, and /gcs when this view made it."""
        for link in self.links:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(link)
        self.links.clear()
        if self.made_root:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.root, MARKER))
            with contextlib.suppress(OSError):
                os.rmdir(self.root)  # never rmtree: a replica may have put a file there
            self.made_root = False


def place(bucket: str, folder: str, fallback: str, root: str = GCS_ROOT) -> View:
    """The view of `bucket`, whose objects are files in `folder` (``fallback/BUCKET``, where
    they stay after the job): at `root` (/gcs) when it can be made there, else at `fallback`."""
    exists = os.path.lexists(root)
    decision = choose(exists, exists and os.path.ismount(root), exists and _leftover(root))
    why = None
    if decision == TAKE_OVER:
        _clear(root)
    if decision == ELSEWHERE:
        why = f"{root} is there already (a mount, or another rehearsal's)"
    else:
        try:
            if decision == MAKE:
                os.mkdir(root, 0o755)
            with open(os.path.join(root, MARKER), "w", encoding="ascii") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            why = f"{root} cannot be made here ({e.strerror or e})"
    if why is not None:
        return View(fallback, made_root=False, why_elsewhere=why)
    view = View(root, made_root=True, why_elsewhere=None)
    link = os.path.join(root, bucket)
    try:
        os.symlink(folder, link)
    except OSError as e:
        view.close()
        return View(fallback, made_root=False, why_elsewhere=f"{link}: {e.strerror or e}")
    view.links.append(link)
    return view


def _leftover(root: str) -> bool:
    """True for a /gcs that a killed rehearsal left: its marker's process is gone, and it holds
    nothing but links."""
    try:
        with open(os.path.join(root, MARKER), encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
        entries = os.listdir(root)
    except (OSError, ValueError):
        return False
    if pid <= 0 or _alive(pid):
        return False
    return all(e == MARKER or os.path.islink(os.path.join(root, e)) for e in entries)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clear(root: str) -> None:
    for entry in os.listdir(root):
        path = os.path.join(root, entry)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
