"""One study per folder: `vtrain tune` holds its study's folder for the study's life.

Two studies in one folder would number their trials alike and run them into the
same trial folders, and each rewrite study.json over the other's. The lock is the
one a local job takes (`vtrain.local.folder_lock`); a distributed trial's own
`vtrain local run` holds its trial's folder inside it. `--new-study` moves the
study aside, its lock held and in it, then holds the folder made in its place.
"""

from __future__ import annotations

from vtrain.local.folder_lock import FolderLock

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


class StudyLock:
    """The hold of one `vtrain tune` on its study's folder."""

    def __init__(self, folder: str, study_file: str) -> None:
        self.folder = folder
        self._study_file = study_file
        self._lock = self._take()

    def _take(self) -> FolderLock:
        return FolderLock.take(self.folder, self._study_file, what="study")

    def set_aside(self) -> str:
        """Move the study in the folder to ``<folder>.N`` (`vtrain.tune.rerun.set_aside`), and
        hold the folder that takes its place; return where the study went."""
        from vtrain.tune.rerun import set_aside

        # Held while it moves, with the study: then the folder made in its place is held.
        moved = self._lock
        try:
            kept = set_aside(self.folder)
            self._lock = self._take()
        finally:
            if moved is not self._lock:
                moved.release()
        return kept

    def release(self) -> None:
        """Let go of the folder."""
        self._lock.release()

    def __enter__(self) -> StudyLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
