"""Dealing files to readers: disjoint, complete, balanced, and the same whatever the order."""

from __future__ import annotations

import random

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain import UsageError
from vtrain.data import Share
from vtrain.data.shares import check_place, deal


@examples(200)
@given(st.integers(0, 60), st.integers(1, 20), st.randoms(use_true_random=False))
def test_shares_are_disjoint_complete_balanced_and_order_free(
    files: int, readers: int, rng: random.Random
) -> None:
    names = [f"gs://b/training-{i:05d}.jsonl" for i in range(files)]
    listed = names[:]
    rng.shuffle(listed)  # another replica's listing came in another order
    shares = [deal(sorted(names), r, readers) for r in range(readers)]
    again = [deal(sorted(listed), r, readers) for r in range(readers)]
    assert shares == again
    dealt = [n for share in shares for n in share]
    assert sorted(dealt) == names  # every file once: none lost, none repeated
    sizes = [len(s) for s in shares]
    assert max(sizes) - min(sizes) <= 1


@examples(200)
@given(st.integers(0, 8), st.integers(1, 5), st.integers(1, 4), st.booleans())
def test_parts_of_a_share_are_disjoint_and_complete(
    files: int, readers: int, parts: int, by_record: bool
) -> None:
    # Records are numbered by (file, row); a part keeps what its files and stride say.
    names = tuple(f"f{i}" for i in range(files))
    rows = 3

    def kept(share: Share) -> list[tuple[str, int]]:
        stream = [(f, r) for f in share.files for r in range(rows)]
        k, n = share.record_shard
        return stream[k::n]

    for reader in range(readers):
        if by_record:
            share = Share(
                split="training",
                uri="x",
                files=names,
                rank=reader,
                world_size=readers,
                record_shard=(reader, readers),
            )
        else:
            share = Share(
                split="training",
                uri="x",
                files=deal(names, reader, readers),
                rank=reader,
                world_size=readers,
            )
        whole = kept(share)
        pieces = [kept(share.part(p, parts)) for p in range(parts)]
        assert sorted(x for piece in pieces for x in piece) == sorted(whole)


def test_a_share_iterates_its_files() -> None:
    share = Share(split="test", uri="p", files=["a", "b"], rank=0, world_size=1)
    assert list(share) == ["a", "b"] and len(share) == 2 and not share.by_record
    assert Share.empty("test").files == () and Share.empty("test").rank is None


@pytest.mark.parametrize(
    ("rank", "world_size", "match"),
    [
        (0, 0, r"world_size: no readers \(got 0\); expected 1 or more"),
        (2, 2, r"rank: out of range \(got 2\); expected 0 to 1 \(world_size is 2\)"),
        (-1, 2, r"rank: out of range \(got -1\)"),
        ("0", 2, r"rank: not an integer \(got '0'\); expected an int"),
        (0, True, r"world_size: not an integer \(got True\)"),
    ],
)
def test_bad_places(rank: object, world_size: object, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        check_place(rank, world_size)
