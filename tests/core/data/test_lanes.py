"""Lanes and leftovers split into parts that hold each of their records once, split after split."""

from __future__ import annotations

from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data.lanes import Lane, Leftover


def kept(lane: Lane, records: int) -> set[int]:
    """Which of `records` records (counted from the lane's cursor) the lane keeps."""
    return set(range(lane.skip, records, lane.step))


def due(leftover: Leftover) -> set[int]:
    return set(range(leftover.start, leftover.count, leftover.step))


@examples(200)
@given(
    skip=st.integers(0, 5),
    step=st.integers(1, 4),
    splits=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 4)), max_size=3),
    records=st.integers(0, 80),
)
def test_split_lanes_partition_what_the_lane_keeps(
    skip: int, step: int, splits: list[tuple[int, int]], records: int
) -> None:
    lane = Lane((3, 4), 10, 2, skip, step)
    for parts, pick in splits:
        pieces = lane.split(parts)
        together = [kept(p, records) for p in pieces]
        assert set().union(*together) == kept(lane, records)
        assert sum(map(len, together)) == len(kept(lane, records))
        assert all((p.files, p.offset, p.records) == ((3, 4), 10, 2) for p in pieces)
        lane = pieces[pick % parts]


@examples(200)
@given(
    count=st.integers(0, 40),
    start=st.integers(0, 10),
    step=st.integers(1, 4),
    splits=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 4)), max_size=3),
)
def test_split_leftovers_partition_what_is_due(
    count: int, start: int, step: int, splits: list[tuple[int, int]]
) -> None:
    leftover = Leftover((1,), count, 9, start, step)
    for parts, pick in splits:
        pieces = leftover.split(parts)
        together = [due(p) for p in pieces]
        assert set().union(*together) == due(leftover)
        assert sum(map(len, together)) == len(due(leftover)) == leftover.left()
        assert [p.left() for p in pieces] == [len(d) for d in together]
        leftover = pieces[pick % parts]


def test_a_whole_file_lane_is_its_index_in_a_position() -> None:
    assert Lane((7,)).to_json() == 7
    assert Lane((7,), skip=1).to_json() == {
        "files": (7,),
        "offset": 0,
        "records": 0,
        "skip": 1,
        "step": 1,
    }
