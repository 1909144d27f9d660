"""Which replicas serve: each says so at run time by creating a file vtrain named for it.

A replica that serves (a parameter server, MXNet's scheduler and servers) never
exits by itself: once the chief has succeeded it is stopped at once, while the
replicas that train get a moment to finish. Only the framework's plugin knows
which replicas serve, and only when it runs: `vtrain.plugins.serve.run_service`
creates the file that SERVES_FILE names. vtrain gives each replica its own such
path, in a private folder of the job's that it removes at the end.
"""

from __future__ import annotations

import contextlib
import os

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class ServingFiles:
    """The job's private folder of serving files, one path per replica."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    @classmethod
    def create(cls) -> ServingFiles:
        """A new folder only this user can read (`tempfile` would cost milliseconds at start)."""
        base = os.environ.get("TMPDIR") or "/tmp"
        while True:
            folder = os.path.join(base, f"vtrain-job-{os.urandom(6).hex()}")
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
                return cls(folder)

    def path(self, name: str) -> str:
        """Where replica `name` says that it serves."""
        return os.path.join(self.folder, f"{name}.serves")

    def progress(self, name: str) -> str:
        """Where replica `name`'s trainer writes its progress (`vtrain.progress.file`)."""
        return os.path.join(self.folder, f"{name}.progress")

    def forget(self, name: str) -> None:
        """Before a (re)start: what an earlier run of `name` said no longer holds."""
        for path in (self.path(name), self.progress(name)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def serves(self, name: str) -> bool:
        """True once the current run of replica `name` has said that it serves."""
        return os.path.exists(self.path(name))

    def job_restarts(self, name: str) -> str | None:
        """Why replica `name`'s service cannot take a lone restarted replica, or None."""
        try:
            with open(self.path(name), encoding="utf-8", errors="replace") as f:
                return f.read().strip() or None
        except OSError:
            return None

    def no_lone_restart(self, names: Iterable[str]) -> str | None:
        """Why a replica restarted alone cannot rejoin this job, as one of replicas `names`
        says that its service cannot take it (`job_restarts`); or None."""
        return next(filter(None, map(self.job_restarts, names)), None)

    def remove(self) -> None:
        """Remove the folder and what the replicas left in it."""
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
            os.rmdir(self.folder)
