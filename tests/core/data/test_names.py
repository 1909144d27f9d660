"""A position names its files below the pattern's folder: the same on every replica, whatever its
working folder, and a resume accepts it however the pattern spells that folder (issue 41)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import merge_states, stream
from vtrain.data.names import name_below, pattern_root, recorded_names, shown


@pytest.mark.parametrize(
    ("pattern", "root"),
    [
        ("data/*.jsonl", "data"),
        ("./data/*.jsonl", "data"),
        ("data//x/*.jsonl", "data/x"),
        ("data/./x/../*.jsonl", "data"),
        ("data/**/*.jsonl", "data"),
        ("*.jsonl", "."),
        ("./*.jsonl", "."),
        ("../d/train-?.csv", "../d"),
        ("/abs/d/*.jsonl", "/abs/d"),
        ("/*.jsonl", "/"),
        ("/", "/"),
        ("data/", "data"),
        ("data/f.jsonl", "data/f.jsonl"),
        ("~/d/*", "~/d"),
        ("file://data/*", "file://data"),
        ("gs://b/k/*.jsonl", "gs://b/k"),
        ("gs://b/*", "gs://b"),
        ("gs://b/k/", "gs://b/k"),
        # An object's name is no path: "." and ".." are names in a bucket.
        ("gs://b/k/../x/*", "gs://b/k/../x"),
    ],
)
def test_the_root_is_the_pattern_s_folder_spelled_one_way(pattern: str, root: str) -> None:
    assert pattern_root(pattern) == root


@pytest.mark.parametrize(
    ("folder", "path", "name"),
    [
        ("/w/data", "/w/data/a.jsonl", "a.jsonl"),
        ("/w/data", "/w/data/sub/a.jsonl", "sub/a.jsonl"),
        ("/w/data/", "/w/data/a.jsonl", "a.jsonl"),
        ("/", "/a.jsonl", "a.jsonl"),
        ("/w/data/f.jsonl", "/w/data/f.jsonl", ""),
        ("gs://b/k", "gs://b/k/x/y.csv", "x/y.csv"),
    ],
)
def test_a_file_is_named_below_the_folder_it_was_listed_in(
    folder: str, path: str, name: str
) -> None:
    assert name_below(folder, path) == name


def test_a_file_outside_the_folder_has_no_name_below_it() -> None:
    with pytest.raises(ValueError, match=r"'/w/database/a' is not below '/w/data'"):
        name_below("/w/data", "/w/database/a")


ROWS = {"a.jsonl": (3, "7"), "sub/b.jsonl": (4, "8")}


@pytest.mark.parametrize(
    ("root", "folder", "keys"),
    [
        # Relative, as the pattern spelled it: found again wherever it is listed.
        ("data", "/disk/run-1/work/data", ["a.jsonl", "sub/b.jsonl"]),
        (".", "/elsewhere", ["a.jsonl", "sub/b.jsonl"]),
        # Absolute, this very folder: as recorded.
        ("/p/data", "/p/data", ["a.jsonl", "sub/b.jsonl"]),
        ("/p/data/", "/p/data", ["a.jsonl", "sub/b.jsonl"]),
        # An older vtrain's root: the deeper folder the files shared, read below ours.
        ("/p/data/x/", "/p/data", ["x/a.jsonl", "x/sub/b.jsonl"]),
        ("gs://b/d/x/", "gs://b/d", ["x/a.jsonl", "x/sub/b.jsonl"]),
        # Absolute elsewhere: the data moved with its names.
        ("/old/data", "/new/data", ["a.jsonl", "sub/b.jsonl"]),
    ],
)
def test_recorded_names_are_read_below_this_listing(
    root: str, folder: str, keys: list[str]
) -> None:
    assert recorded_names(root, ROWS, folder) == dict(zip(keys, ROWS.values(), strict=True))


@pytest.mark.parametrize(
    ("root", "name", "text"),
    [("data", "a.jsonl", "data/a.jsonl"), (".", "a", "a"), ("/", "a", "/a"), ("d/f", "", "d/f")],
)
def test_a_file_is_shown_below_the_pattern_s_folder(root: str, name: str, text: str) -> None:
    assert shown(root, name) == text


# -- the property: any working folder, any spelling ------------------------------------------


def ident(record: dict[str, Any]) -> tuple[int, int]:
    return record["f"], record["r"]


def spellings(rel: str, cwd: Path) -> list[str]:
    """Ways to write the pattern of the split at `cwd/rel`: as given, with ./, //, /./, x/..,
    through the working folder's parent, and absolute."""
    star = "*.jsonl"
    return [
        f"{rel}/{star}",
        f"./{rel}/{star}",
        f"{rel.replace('/', '//')}//{star}",
        f"{rel}/./{star}",
        f"nowhere/../{rel}/{star}",
        f"../{cwd.name}/{rel}/{star}",
        f"{cwd}/{rel}/{star}",
    ]


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    sizes = draw(st.lists(st.integers(0, 6), min_size=2, max_size=6))
    worlds = draw(st.lists(st.integers(1, 2), min_size=2, max_size=3))
    return {
        "rel": "/".join(draw(st.lists(st.sampled_from(["data", "in", "x.y"]), min_size=1))[:3]),
        "sizes": sizes,
        "worlds": worlds,
        # Each reader of each stage lists the split from its own working folder: a disk at
        # any depth that links the project's entries (as a rehearsal's), or the project.
        "disks": [
            [draw(st.lists(st.sampled_from(["disks", "r-0", "run-1"]), max_size=3)) for _ in w]
            for w in [range(n) for n in worlds]
        ],
        "spell": [draw(st.integers(0, 6)) for _ in worlds],
        "takes": [draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)) for n in worlds],
        "shuffle": draw(st.none() | st.integers(0, 99)),
    }


@examples(60)
@given(scenarios())
def test_any_working_folder_and_any_spelling_resume_every_record_once(s: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as name:
        top = Path(name)
        project = top / "work"  # named as every disk's working folder: ../work/ fits all
        folder = project / s["rel"]
        folder.mkdir(parents=True)
        every = []
        for f, size in enumerate(s["sizes"]):
            rows = [{"f": f, "r": r} for r in range(size)]
            every += [ident(r) for r in rows]
            (folder / f"part-{f}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

        def work(path: list[str]) -> Path:
            if not path:
                return project
            cwd = top.joinpath(*path, "work")
            cwd.mkdir(parents=True, exist_ok=True)
            entry = cwd / s["rel"].split("/")[0]
            if not entry.exists():
                entry.symlink_to(project / s["rel"].split("/")[0])
            return cwd

        seen: list[tuple[int, int]] = []
        position = None
        for stage, n in enumerate(s["worlds"]):
            last = stage == len(s["worlds"]) - 1
            streams = []
            for r in range(n):
                cwd = work(s["disks"][stage][r])
                # Every reader of a stage is given the same pattern, as a job's replicas are.
                pattern = spellings(s["rel"], work(s["disks"][stage][0]))[s["spell"][stage]]
                with contextlib.chdir(cwd):
                    streams.append(
                        stream(
                            rank=r,
                            world_size=n,
                            resume=position,
                            uri=pattern,
                            environ={},
                            shuffle_seed=s["shuffle"],
                        )
                    )
            if streams[0].epoch == 1:  # the epoch was used up at the last stop
                break
            for r, one in enumerate(streams):
                seen += [ident(x) for x in (one if last else islice(one, s["takes"][stage][r]))]
            if not last:
                position = json.loads(json.dumps(merge_states([one.state() for one in streams])))
        assert len(seen) == len(set(seen)), "a record came twice"
        assert sorted(seen) == sorted(every), "a record is missing"


def test_replicas_in_other_working_folders_record_one_listing(tmp_path: Path) -> None:
    """The case of issue 41: two replicas' disks, one relative pattern; their states merge."""
    (tmp_path / "project" / "data").mkdir(parents=True)
    (tmp_path / "project" / "data" / "training-00.jsonl").write_text('{"f": 0, "r": 0}\n' * 2)
    states = []
    for r in range(2):
        disk = tmp_path / "disks" / f"worker-{r}" / "run-0" / "work"
        disk.mkdir(parents=True)
        (disk / "data").symlink_to(tmp_path / "project" / "data")
        with contextlib.chdir(disk):
            one = stream(rank=r, world_size=2, uri="data/*.jsonl", environ={}, by_record=True)
        states.append(one.state())
    assert states[0]["source"] == states[1]["source"]
    assert states[0]["source"]["root"] == "data"
    assert [row[0] for row in states[0]["source"]["files"]] == ["training-00.jsonl"]
    merged = merge_states(states)
    assert os.fspath(tmp_path) not in json.dumps(merged)  # no replica's folder in it
