"""Each replica's own local disk: a working folder that sees the job's code, a HOME, a TMPDIR.

On Vertex each replica is a machine: what it writes on its local disk is its own,
and lost with it (a restart is a new machine). Only the platform's shared places,
the AIP_* folders, /gcs/ and gs://, are seen by every replica and outlive it.
Here each run of each replica gets ``<trial>/disks/<replica>/run-<N>/`` with

- ``work/``: its working folder, one symbolic link per top-level entry of the
  folder vtrain runs in (the job's code: imports and reads work), so that what
  it writes there lands in a folder of its own;
- ``home/`` (HOME) and ``tmp/`` (TMPDIR).

Links are cheap (one per entry, no copy); the price is that a write *inside* a
linked folder (``data/out.bin``) still lands in the project. What each run wrote
is listed after it ends, for the verdict (`vtrain.local.checks`).

The links are made once per job, in ``disks/.links/``, and each working folder
gets hard links to them: a symbolic link is an inode of its own, and making one
measured 72 µs here against 7 µs for a hard link to it (eight replicas of a
project of 17 entries: 10 ms of every start). A replica that removes or replaces
an entry of its folder changes only its own name for it: a symbolic link's
target cannot change in place.

An --output-dir used again keeps the last job's links and each replica's
``run-0/`` that its run left as it found them: an empty HOME and TMPDIR, and a
working folder that still names exactly the job's links. What a run changed,
its other runs and their records move aside and are removed while the job runs.
Every new folder or link is an inode, which cost from 20 to 500 µs of kernel
time each on this VM: 54 for eight replicas of a project of 12 entries, made
while they start.
"""

from __future__ import annotations

import contextlib
import os
import threading

from vtrain.frozen import Frozen

DISKS_FOLDER = "disks"
CLEAN_AFTER = 2.0
"""Seconds into a job before the previous job's disks are removed."""
LINKS_FOLDER = ".links"
"""The job's one copy of the links to the project's entries, in the disks' folder."""


class Disk(Frozen):
    """One run's local disk: its folder and the working, home and temporary folders in it."""

    __slots__ = ("folder", "work", "home", "tmp")
    folder: str
    work: str
    home: str
    tmp: str

    def __init__(self, folder: str, work: str, home: str, tmp: str) -> None:
        self._init_from(locals())

    def variables(self, environ: dict[str, str]) -> dict[str, str]:
        """HOME, TMPDIR and PWD for this disk (TMP and TEMP too, where `environ` sets them)."""
        found = {"HOME": self.home, "TMPDIR": self.tmp, "PWD": self.work}
        for name in ("TMP", "TEMP"):
            if name in environ:
                found[name] = self.tmp
        if "PYTHONUSERBASE" not in environ and "HOME" in environ:
            # Packages installed with `pip install --user` stay where HOME was: the job's
            # image has them too, and the rehearsal must import what the job imports.
            found["PYTHONUSERBASE"] = os.path.join(environ["HOME"], ".local")
        return found

    def written(self) -> list[str]:
        """The files this run wrote on its disk, relative to its folder (``work/ckpt/1.pt``)."""
        found: list[str] = []
        # scandir's entries know their type: one system call per folder, none per file, and
        # the links to the code are neither followed nor listed.
        folders = [""]
        while folders:
            rel = folders.pop()
            try:
                entries = list(os.scandir(os.path.join(self.folder, rel)))
            except OSError:
                continue
            for entry in entries:
                path = os.path.join(rel, entry.name)
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    folders.append(path)
                else:
                    found.append(path)
        return sorted(found)


_OLD = ".old-"  # <root>.old-<pid>[+…]: the last job's disks, moved aside by vtrain <pid>


def _abandoned(root: str) -> list[str]:
    """The `<root>.old-<pid>` folders whose vtrain is gone: killed before it removed them."""
    parent, prefix = os.path.split(root)
    prefix += _OLD
    found: list[str] = []
    try:
        names = os.listdir(parent or ".")
    except OSError:
        return found
    for name in names:
        pid = name[len(prefix) :].rstrip("+") if name.startswith(prefix) else ""
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            found.append(os.path.join(parent, name))
    return found


def _alive(pid: int) -> bool:
    # Not vtrain.storage.owner.running: its imports cost more than the whole start of a job.
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class Disks:
    """The replicas' disks under `root`, whose working folders see the entries of `project`."""

    def __init__(self, root: str, project: str, *, reuse: bool = True) -> None:
        """`reuse`: keep what of the last job's disks under `root` is as it was made (False
        for a job that prepares none: its records go there, not disks)."""
        self.root = root
        self._cleaner: threading.Thread | None = None
        self._go = threading.Event()
        # The disks of a vtrain killed before it removed the last job's: they go too.
        self._old = _abandoned(root)
        self._trash: str | None = None  # where what this job cannot use waits for removal
        self._thrown = 0
        real_root = os.path.realpath(root)
        entries = []
        with os.scandir(project) as it:
            for entry in it:
                target = os.path.join(project, entry.name)
                real = os.path.realpath(target)
                # The entry holding the disks themselves would be a loop (./vtrain-output).
                if real_root == real or real_root.startswith(real + os.sep):
                    continue
                entries.append((entry.name, target))
        self._entries = sorted(entries)
        self._links: str | None = None  # LINKS_FOLDER, once made (or kept)
        self._link_inodes: dict[str, int] = {}  # each kept link's inode, by entry
        self._hard_links = True  # until the file system refuses one
        self._named: set[str] = set()  # the replicas given a disk
        self._kept = False  # the root is the last job's: what it left waits in it
        if not os.path.lexists(root):
            return
        links = os.path.join(root, LINKS_FOLDER)
        if reuse and self._same_links(links):
            self._links, self._kept = links, True
            return
        # An --output-dir used before, whose links are not this job's: its disks move
        # aside at once (a new machine is empty), and go while the job runs (`clean`).
        self._old.append(self._aside())
        os.rename(root, self._old[-1])

    def _aside(self) -> str:
        """A free name beside the root for what goes: `<root>.old-<pid>[+…]`."""
        aside = f"{self.root}{_OLD}{os.getpid()}"
        while os.path.lexists(aside) or aside in self._old:  # an earlier vtrain of this pid's
            aside += "+"
        return aside

    def _same_links(self, links: str) -> bool:
        """True when `links` holds exactly a link to each of the project's entries."""
        try:
            with os.scandir(links) as it:
                found = {e.name: e.inode() for e in it if e.is_symlink()}
            targets = {name: os.readlink(os.path.join(links, name)) for name in found}
        except OSError:
            return False
        if targets != dict(self._entries):
            return False
        self._link_inodes = found
        return True

    def clean(self) -> None:
        """Remove the previous job's disks in a thread, CLEAN_AFTER seconds from now or at
        `close`, whichever comes first (start it after any fork, and after the replicas)."""
        if self._kept and self._cleaner is None:
            # The disks of replicas this job does not have (the last job had more).
            self._kept = False
            with contextlib.suppress(FileNotFoundError):
                for name in os.listdir(self.root):
                    if name != LINKS_FOLDER and name not in self._named:
                        self._discard(os.path.join(self.root, name))
        if self._old and self._cleaner is None:
            self._cleaner = threading.Thread(target=self._remove_old, daemon=True)
            self._cleaner.start()

    def close(self) -> None:
        """Wait for the previous job's disks to be gone (removed now if `clean` never ran)."""
        self._go.set()
        self.clean()
        if self._cleaner is not None:
            self._cleaner.join()

    def _remove_old(self) -> None:
        # Not while the replicas start: shutil's import and the removal took 10 ms of CPU
        # (eight disks), which the replicas' own start on a busy machine would wait for.
        self._go.wait(CLEAN_AFTER)
        import shutil

        for folder in self._old:
            shutil.rmtree(folder, ignore_errors=True)

    def prepare(self, name: str, run: int) -> Disk:
        """A new, empty disk for run `run` of replica `name`, its working folder linked."""
        folder = os.path.join(self.root, name, f"run-{run}")
        disk = Disk(
            folder,
            os.path.join(folder, "work"),
            os.path.join(folder, "home"),
            os.path.join(folder, "tmp"),
        )
        if name not in self._named:
            self._named.add(name)
            if self._kept:  # the last job's disks are here: what it left goes aside
                # The run's record (`<folder>.record`, the probe's) is vtrain's to empty.
                if self._as_made(disk):
                    self._tidy(name, keep=(folder, folder + ".record"))
                    return disk
                self._tidy(name, keep=(folder + ".record",))
        if os.path.lexists(folder):  # an --output-dir used before: a new machine is empty
            self._discard(folder)
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        for path in (folder, disk.work, disk.home, disk.tmp):
            os.mkdir(path)
        links = self._made_links()
        for entry, target in self._entries:  # a new folder: nothing is in the way
            path = os.path.join(disk.work, entry)
            if self._hard_links:
                try:
                    os.link(os.path.join(links, entry), path, follow_symlinks=False)
                    continue
                except OSError:  # a file system without hard links: not asked again
                    self._hard_links = False
            os.symlink(target, path)
        return disk

    def _as_made(self, disk: Disk) -> bool:
        """True when the last job's `disk` is as `prepare` made it: nothing in HOME or TMPDIR,
        and the working folder names exactly the job's links (the same inodes)."""
        try:
            with os.scandir(disk.folder) as it:  # three real folders, and nothing else
                found = {e.name: e.is_dir(follow_symlinks=False) for e in it}
            if found != {"work": True, "home": True, "tmp": True}:
                return False
            if os.listdir(disk.home) or os.listdir(disk.tmp):
                return False
            with os.scandir(disk.work) as it:
                return {e.name: e.inode() for e in it} == self._link_inodes
        except OSError:
            return False

    def _tidy(self, name: str, keep: tuple[str, ...]) -> None:
        """Move aside everything the last job left in replica `name`'s folder but `keep`."""
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for entry in os.listdir(os.path.join(self.root, name)):
                path = os.path.join(self.root, name, entry)
                if path not in keep:
                    self._discard(path)

    def _discard(self, path: str) -> None:
        """Move `path` into this job's trash, removed with the last job's disks (`clean`)."""
        if self._cleaner is not None:  # the trash may be going already: remove it here
            import shutil

            shutil.rmtree(path)
            return
        if self._trash is None:
            self._trash = self._aside()
            os.mkdir(self._trash)
            self._old.append(self._trash)
        self._thrown += 1
        os.rename(path, os.path.join(self._trash, str(self._thrown)))

    def _made_links(self) -> str:
        """LINKS_FOLDER, its links made at the first call."""
        if self._links is None:
            links = os.path.join(self.root, LINKS_FOLDER)
            os.makedirs(links)  # the root was moved aside: a new folder
            for entry, target in self._entries:
                os.symlink(target, os.path.join(links, entry))
            self._links = links
        return self._links
