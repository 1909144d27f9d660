"""Each trainer's rows and files: every row once, in rank order; bad inputs named."""

from __future__ import annotations

import pytest

from vtrain import UsageError
from vtrain_xgboost import file_share, row_block


@pytest.mark.parametrize(("total", "world"), [(1, 1), (10, 3), (3000, 3), (7, 7), (100, 8)])
def test_row_blocks_cover_every_row_once_in_rank_order(total: int, world: int) -> None:
    blocks = [row_block(total, r, world) for r in range(world)]
    rows = [i for b in blocks for i in range(total)[b]]
    assert rows == list(range(total))
    assert max(b.stop - b.start for b in blocks) - min(b.stop - b.start for b in blocks) <= 1


def test_rank_1_of_3_reads_the_second_block() -> None:
    assert row_block(3000, 1, 3) == slice(1000, 2000)
    assert row_block(10, 0, 3) == slice(0, 4) and row_block(10, 2, 3) == slice(7, 10)


def test_files_go_round_robin() -> None:
    files = [f"part-{i}.csv" for i in range(5)]
    assert [file_share(files, r, 2) for r in range(2)] == [files[0::2], files[1::2]]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: row_block(2, 0, 3),
            r"rows: cannot give each of 3 trainer\(s\) at least one "
            r"row \(got 2\); expected an int >= 3",
        ),
        (lambda: row_block(True, 0, 1), r"rows: .* \(got True\)"),
        (
            lambda: file_share(["a"], 0, 2),
            r"files: 1 file\(s\) for 2 trainers: some would "
            r"train on nothing \(got \['a'\]\); expected at least 2",
        ),
        (
            lambda: file_share("gs://b/*.csv", 0, 2),
            r"files: one string, not a list of files "
            r"\(got 'gs://b/\*.csv'\)",
        ),
    ],
)
def test_bad_shard_inputs_are_named(call: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        call()  # type: ignore[operator]
