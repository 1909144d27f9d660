"""`stream()` on a bq:// split: resumed at a row offset of the position's read session."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from bq_server import URI, BigQueryServer, rows_table, serve
from data_files import write_split

from vtrain import ConfigError, UsageError
from vtrain.data import merge_states, stream

ROWS = 23


@pytest.fixture
def server() -> Iterator[BigQueryServer]:
    with serve(rows_table(ROWS)) as state:
        yield state


def env(server: BigQueryServer, tmp_path: Path) -> dict[str, str]:
    return {**server.environ, "AIP_CHECKPOINT_DIR": str(tmp_path / "ckpt")}


def readers(n: int, environ: dict[str, str], **options: Any) -> list[Any]:
    # Reader 0 first: it makes the session the others wait for.
    return [stream(uri=URI, rank=r, world_size=n, environ=environ, **options) for r in range(n)]


def test_a_table_resumes_by_row_offset_with_another_world_size(
    server: BigQueryServer, tmp_path: Path
) -> None:
    e = env(server, tmp_path)
    first = readers(3, e)
    seen = [row["id"] for one, n in zip(first, (4, 0, 6), strict=True) for row in islice(one, n)]
    position = json.loads(json.dumps(merge_states([s.state() for s in first])))
    sessions = len(server.calls("CreateReadSession"))
    reads = len(server.calls("ReadRows"))

    second = readers(2, e, resume=position)
    rest = [row["id"] for one in second for row in one]
    assert sorted(seen + rest) == list(range(ROWS)) and len(seen + rest) == ROWS
    assert len(server.calls("CreateReadSession")) == sessions  # the position's session
    offsets = {r.read_stream: r.offset for r in server.calls("ReadRows")[reads:]}
    assert sorted(offsets.values())[-2:] == [4, 6]  # streams 0 and 2 resumed where they stopped

    assert [s.next_epoch() for s in second] == [1, 1]
    again = [row["id"] for one in second for row in one]
    assert sorted(again) == list(range(ROWS))
    assert server.calls("CreateReadSession")[-1].max_stream_count == 2  # dealt to 2 now


def test_the_same_world_size_resumes_in_the_unbroken_order(
    server: BigQueryServer, tmp_path: Path
) -> None:
    e = env(server, tmp_path)
    opts = {"shuffle_seed": 5, "buffer": 4}
    unbroken = [[row["id"] for row in one] for one in readers(2, e, **opts)]
    first = readers(2, e, **opts)
    seen = [[row["id"] for row in islice(one, 5)] for one in first]
    position = merge_states([s.state() for s in first])
    rest = [[row["id"] for row in one] for one in readers(2, e, resume=position, **opts)]
    assert [a + b for a, b in zip(seen, rest, strict=True)] == unbroken


def test_an_expired_session_is_refused_with_the_reason(tmp_path: Path) -> None:
    with serve(rows_table(ROWS), expire_in=1.0) as server:
        one = stream(uri=URI, rank=0, world_size=1, environ=server.environ)
        list(islice(one, 3))
        position = merge_states([one.state()])
        time.sleep(0.6)  # the session is handed out for half its short life
        with pytest.raises(
            ConfigError,
            match=r"resume: source.session: the position's BigQuery read session may be read "
            r"only until .*the streams of a new one split the table another way",
        ):
            stream(uri=URI, rank=0, world_size=1, environ=server.environ, resume=position)


def test_foreign_positions_are_refused(server: BigQueryServer, tmp_path: Path) -> None:
    write_split(tmp_path / "d", 2)
    files = stream(uri=str(tmp_path / "d" / "*"), rank=0, world_size=1, environ={})
    next(files)
    with pytest.raises(
        ConfigError,
        match=r"resume: source.format: a position taken on records "
        r"of another format \(got 'jsonl'\)",
    ):
        stream(
            uri=URI,
            rank=0,
            world_size=1,
            environ=server.environ,
            resume=merge_states([files.state()]),
        )
    table = stream(uri=URI, rank=0, world_size=1, environ=server.environ)
    next(table)
    position = merge_states([table.state()])
    position["source"] = {**position["source"], "uri": "bq://my-project.my_data.other"}
    with pytest.raises(ConfigError, match=r"resume: source.uri: a position of another table"):
        stream(uri=URI, rank=0, world_size=1, environ=server.environ, resume=position)
    with pytest.raises(UsageError, match=r"by_record: has no meaning for a BigQuery table"):
        stream(uri=URI, rank=0, world_size=1, environ=server.environ, by_record=True)
