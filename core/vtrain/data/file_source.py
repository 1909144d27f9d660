"""`FileSource`: a split's files as a stream reads them: listed once, sized, read from an offset.

The listing (sorted names, sizes, generations) is the source's identity: a
position records it, and a resume refuses files that differ from it. Files are
named below the pattern's folder (`vtrain.data.names`), so that the identity is
the same on every replica, whatever its working folder.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

from vtrain.data.csv_records import read_csv_at
from vtrain.data.file_stats import file_stats
from vtrain.data.files import files
from vtrain.data.jsonl import read_jsonl_at
from vtrain.data.lanes import Lane
from vtrain.data.listing import listed_folder
from vtrain.data.names import names_below, pattern_root, recorded_names, shown
from vtrain.data.records import Opener, check_format, format_of
from vtrain.data.source import Learn
from vtrain.data.tfrecord import read_tfrecord_at
from vtrain.errors import ConfigError


class FileSource:
    """The files of a split, in sorted order, and how to read a lane of them."""

    def __init__(
        self,
        uri: str,
        names: tuple[str, ...],
        stats: list[tuple[int, str]],
        kinds: tuple[str, ...],
        check_crc: bool,
        opener: Opener,
        folder: str,
    ) -> None:
        self.uri = uri
        """The pattern the files were listed by."""
        self.names = names
        """Each file as this replica opens it: a path, or a gs:// URI."""
        self.sizes: tuple[int, ...] | None = tuple(size for size, _ in stats)
        self._stats = stats
        self.kinds = kinds
        self.check_crc = check_crc
        self.opener = opener
        self._folder = folder
        uniform = kinds[0] if len(set(kinds)) == 1 else None
        # Named below the pattern's folder, never by full path: a replica's working folder,
        # its own on each disk, must not change what every replica's position says.
        self._below = names_below(folder, names)
        self.identity: Mapping[str, Any] = {
            "uri": uri,
            "format": uniform,
            "root": pattern_root(uri),
            "files": tuple(
                (n, size, gen) for n, (size, gen) in zip(self._below, stats, strict=True)
            ),
        }
        """What a position records of the source: the files, each with its size and generation."""

    @classmethod
    def list(
        cls,
        split: str,
        *,
        format: str | None,
        check_crc: bool,
        uri: str | None,
        environ: Mapping[str, str],
        gcs_mount: str | None,
        fuse: bool | None,
        client: Any,
    ) -> FileSource:
        """List `split` (see `vtrain.data.files`) and look up each file's size and generation."""
        every = files(
            split,
            rank=0,
            world_size=1,
            uri=uri,
            environ=environ,
            gcs_mount=gcs_mount,
            fuse=fuse,
            client=client,
        )
        chosen = check_format(format) if format is not None else None
        if chosen is None and every.format is not None:
            chosen = check_format(every.format, "AIP_DATA_FORMAT")
        kinds = tuple(chosen or format_of(name) for name in every.files)
        stats = file_stats(every.files, environ, client)
        assert every.uri is not None  # a reader's share always has its pattern
        folder = listed_folder(
            every.uri, environ=environ, gcs_mount=gcs_mount, fuse=fuse, client=client
        )
        opener = Opener(environ, client)
        return cls(every.uri, every.files, stats, kinds, check_crc, opener, folder)

    @property
    def count(self) -> int:
        """How many files the split has."""
        return len(self.names)

    def check(self, recorded: Mapping[str, Any], where: str) -> None:
        """Refuse a position's source unless it names these very files, unchanged."""
        ours = self.identity
        if recorded.get("format") != ours["format"]:
            raise ConfigError(
                "a position taken on records of another format",
                source=where,
                path="source.format",
                value=recorded.get("format"),
                expected=f"{ours['format'] or 'each file by its suffix'}, as this stream reads",
                hint="resume with the format the position was taken with (format= or "
                "AIP_DATA_FORMAT)",
            )
        root = recorded.get("root")
        if not isinstance(root, str):
            raise ConfigError(
                "not a folder",
                source=where,
                path="source.root",
                value=root,
                expected="the folder the files' names are below, as Stream.state() records it",
            )
        then = recorded_names(root, _rows(recorded.get("files"), where), self._folder)
        now = dict(zip(self._below, self._stats, strict=True))
        # Named below the pattern's folder, as the position holds them: short, and the same
        # on every replica.
        gone = [name or root for name in then if name not in now]
        new = [name or ours["root"] for name in now if name not in then]
        if gone or new:
            raise ConfigError(
                "the split's files are not those the position was taken on",
                source=where,
                path="source.files",
                value=f"{len(then)} then, {len(now)} now",
                expected="the same files",
                hint=_listed("gone", gone) + _listed("new", new) + "a position holds only for "
                "the files it was taken on: restore them, or start the epoch over (resume=None)",
            )
        for name, (size, gen) in then.items():
            if (size, gen) != now[name]:
                what = "size" if size != now[name][0] else "generation"
                raise ConfigError(
                    f"changed since the position was taken: its {what} differs",
                    source=shown(ours["root"], name),
                    value=f"{now[name][0] if what == 'size' else now[name][1]} now",
                    expected=f"{size if what == 'size' else gen}, as the position recorded",
                    hint="a position holds only for the files it was taken on: restore the file, "
                    "or start the epoch over (resume=None)",
                )

    def read(self, lane: Lane, learn: Learn) -> Iterator[Any]:
        """Yield the records `lane` keeps, file after file, moving it along."""
        while lane.files:
            index = lane.files[0]
            name, kind = self.names[index], self.kinds[index]

            def reopen(name: str = name) -> BinaryIO:
                return self.opener(name)

            with self.opener(name) as stream:
                if kind == "jsonl":
                    yield from read_jsonl_at(stream, name, reopen, lane)
                elif kind == "csv":
                    yield from read_csv_at(stream, name, reopen, lane)
                else:
                    yield from read_tfrecord_at(stream, name, lane, check_crc=self.check_crc)
            learn(index, lane.records)
            lane.next_file()

    def for_epoch(self, world_size: int) -> FileSource:
        """The source of the next epoch: the same files."""
        return self


def _rows(value: object, where: str) -> dict[str, tuple[int, str]]:
    """A position's file rows [name, size, generation] by name; a ConfigError if malformed."""
    rows: dict[str, tuple[int, str]] = {}
    if isinstance(value, (list, tuple)):
        for row in value:
            if not (isinstance(row, (list, tuple)) and len(row) == 3):
                break
            name, size, gen = row
            if not (isinstance(name, str) and isinstance(size, int) and isinstance(gen, str)):
                break
            rows[name] = (size, gen)
        else:
            return rows
    raise ConfigError(
        "not a list of files",
        source=where,
        path="source.files",
        value=value,
        expected="[name, size, generation] for each file, as Stream.state() records them",
    )


def _listed(what: str, names: list[str]) -> str:
    if not names:
        return ""
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{what}: {', '.join(names[:3])}{more}; "
