"""The property of issue 29: stop anywhere, resume with any number of readers, and the epoch
is every record exactly once; with the same number, in the order an unbroken run gives."""

from __future__ import annotations

import json
import tempfile
from itertools import islice
from pathlib import Path
from typing import Any

from data_files import tfrecord_bytes
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import merge_states, progress, stream


def write(folder: Path, kind: str, sizes: list[int], odd: bool) -> list[tuple[int, int]]:
    """One file per size, in `kind`; `odd` adds blank lines, CRLF, quoted newlines and non-ASCII
    text. Returns every record's (file, row)."""
    every = []
    for f, size in enumerate(sizes):
        rows = [(f, r) for r in range(size)]
        every += rows
        text = "ü\n,x" if odd else "t"
        path = folder / f"part-{f:02d}.{kind}"
        if kind == "jsonl":
            lines = [json.dumps({"f": a, "r": b, "t": text}, ensure_ascii=False) for a, b in rows]
            if odd:
                lines = [line + ("\n" if i % 3 else "\n\n") for i, line in enumerate(lines)]
                path.write_bytes("".join(lines).encode())
            else:
                path.write_bytes("".join(line + "\n" for line in lines).encode())
        elif kind == "csv":
            end = "\r\n" if odd else "\n"
            body = "".join(
                f'{a},{b},"{text}"{end}' + (end if odd and b % 4 == 1 else "") for a, b in rows
            )
            path.write_bytes(f"f,r,t{end}{body}".encode())
        else:
            path.write_bytes(
                tfrecord_bytes([json.dumps({"f": a, "r": b}).encode() for a, b in rows])
            )
    return every


def ident(record: Any) -> tuple[int, int]:
    if isinstance(record, bytes):
        record = json.loads(record)
    return int(record["f"]), int(record["r"])


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["jsonl", "csv", "tf-record"]))
    sizes = draw(st.lists(st.integers(0, 12), min_size=1, max_size=9))
    by_record = draw(st.booleans())
    most = 8 if by_record else min(8, len(sizes))
    worlds = draw(st.lists(st.integers(1, most), min_size=2, max_size=4))
    shuffle = draw(st.none() | st.tuples(st.integers(0, 2**40), st.integers(1, 6)))
    takes = [draw(st.lists(st.integers(0, 15), min_size=n, max_size=n)) for n in worlds[:-1]]
    return {
        "kind": kind,
        "sizes": sizes,
        "odd": kind != "tf-record" and draw(st.booleans()),
        "by_record": by_record,
        "worlds": worlds,
        "shuffle": shuffle,
        "takes": takes,
    }


@examples(100)
@given(scenarios())
def test_stop_and_resume_with_any_world_size_gives_the_epoch_once(s: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        suffix = "tfrecord" if s["kind"] == "tf-record" else s["kind"]
        every = write(folder, suffix, s["sizes"], s["odd"])
        seed, buffer = s["shuffle"] or (None, None)
        options = {
            "uri": str(folder / "*"),
            "environ": {},
            "shuffle_seed": seed,
            "buffer": buffer,
            "by_record": s["by_record"],
        }
        worlds = s["worlds"]
        seen: list[tuple[int, int]] = []
        by_rank: dict[int, list[tuple[int, int]]] = {r: [] for r in range(max(worlds))}
        position = None
        for stage, n in enumerate(worlds):
            streams = [stream(rank=r, world_size=n, resume=position, **options) for r in range(n)]
            if streams[0].epoch == 1:  # the epoch was used up at the last stop
                break
            last = stage == len(worlds) - 1
            for r, one in enumerate(streams):
                got = [ident(x) for x in (one if last else islice(one, s["takes"][stage][r]))]
                seen += got
                by_rank[r] += got
            if not last:
                merged = merge_states([one.state() for one in streams])
                position = json.loads(json.dumps(merged))  # as a checkpoint keeps it
                told = progress(position)
                assert (told.epoch, told.world_size, told.read) == (0, n, len(seen))
                if told.left is not None and not s["odd"]:
                    assert told.left == len(every) - len(seen)

        assert len(seen) == len(set(seen)), "a record came twice"
        assert sorted(seen) == sorted(every), "a record is missing"
        if len(set(worlds)) == 1:
            n = worlds[0]
            for r in range(n):
                unbroken = [ident(x) for x in stream(rank=r, world_size=n, **options)]
                assert by_rank[r] == unbroken
