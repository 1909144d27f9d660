"""The files a plain `keras.callbacks.ModelCheckpoint` wrote, found by name and checked before use.

ModelCheckpoint writes `filepath.format(epoch=epoch + 1, batch=..., **logs)`
straight to its destination; a VM that stops mid-write leaves the newest file
cut short. A .keras file is a zip whose directory sits at the end, and every
member carries a CRC-32, so `testzip` proves it whole; an HDF5 file (.h5,
.weights.h5) is proved whole by reading every dataset in it. Only then is it
loaded, so a torn file never puts half its weights into the model.
"""

from __future__ import annotations

import contextlib
import os
import re
import string
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

from vtrain.errors import UsageError
from vtrain.storage.location import Location

SUFFIXES = (".keras", ".weights.h5", ".h5", ".hdf5")
"""What ModelCheckpoint writes: a .keras model, .weights.h5 weights, or legacy HDF5."""
_FIRST_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class PlainFile:
    """One file a plain ModelCheckpoint wrote, and where in training its name says it was."""

    name: str
    epoch: int
    """The `{epoch}` in the name: epochs finished, as ModelCheckpoint counts from 1."""
    batch: int | None = None
    """The `{batch}` in the name, for a save in the middle of an epoch."""

    @property
    def progress(self) -> tuple[int, int]:
        """(epochs complete, batches into the next one), as `KerasCheckpoint.progress`."""
        # ModelCheckpoint names a mid-epoch save with the epoch it is in, counted from 1.
        return (self.epoch, 0) if self.batch is None else (self.epoch - 1, self.batch)


def name_pattern(filepath: str) -> re.Pattern[str]:
    """A regular expression for the names `filepath`'s last part formats to (it needs `{epoch}`)."""
    regex, fields = "", set()
    for literal, field, _, _ in string.Formatter().parse(os.path.basename(filepath)):
        regex += re.escape(literal)
        if field is None:
            continue
        if field in ("epoch", "batch") and field not in fields:
            regex += rf"(?P<{field}>\d+)"
            fields.add(field)
        else:
            regex += r".+?"  # a logged value such as {val_loss:.2f}
    if "epoch" not in fields:
        raise UsageError(
            "the ModelCheckpoint file path has no {epoch}: resume cannot tell a file's epoch",
            source="resume(filepath=...)",
            value=filepath,
            expected="a path such as '.../ckpt-{epoch:04d}.keras'",
        )
    return re.compile(regex)


def find(location: Location, filepath: str | None = None) -> list[PlainFile]:
    """ModelCheckpoint's files in `location`, newest first.

    With `filepath` (the one given to ModelCheckpoint), names that it formats to;
    without, any .keras, .weights.h5, .h5 or .hdf5 file with a number in its
    name, the first number being the epoch (`ckpt-{epoch:04d}.keras`,
    `weights.{epoch:02d}-{val_loss:.2f}.h5`).
    """
    pattern = name_pattern(filepath) if filepath is not None else None
    found = []
    for name in location.list():
        if not name.endswith(SUFFIXES):
            continue
        if pattern is not None:
            match = pattern.fullmatch(name)
            if match is None:
                continue
            batch = match.groupdict().get("batch")
            epoch = int(match["epoch"])
            found.append(PlainFile(name, epoch, None if batch is None else int(batch)))
        elif number := _FIRST_NUMBER.search(name):
            found.append(PlainFile(name, int(number.group())))
    return sorted(found, key=lambda f: (f.progress, f.name), reverse=True)


def damage(path: str) -> str | None:
    """Why the Keras file at `path` is not whole, or None when every byte of it checks out."""
    try:
        if path.endswith(".keras"):
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
                if bad is not None:
                    return f"{bad} inside it fails its CRC-32"
                if not archive.namelist():
                    return "an empty archive"
            return None
        # Keras' own dependency; only HDF5 files need it (untyped, and not in the lint session).
        import h5py

        with h5py.File(path, "r") as f:
            f.visititems(_read_dataset)
        return None
    except Exception as e:  # a torn file fails in many ways: zip, HDF5, OS, EOF
        return f"{type(e).__name__}: {e}"


def _read_dataset(name: str, item: object) -> None:
    if hasattr(item, "dtype"):  # a dataset, not a group: read it all, to its last byte
        item[()]  # type: ignore[index]


@contextlib.contextmanager
def local_copy(location: Location, name: str) -> Iterator[str]:
    """A local path to read `name` from: in place on a disk or mount, else a temporary copy."""
    if location.path is not None:
        yield os.path.join(location.path, name)
        return
    # The suffix stays: Keras tells the formats apart by it.
    fd, path = tempfile.mkstemp(prefix="vtrain-plain-", suffix="-" + name)
    os.close(fd)
    try:
        location.download(name, path)
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
