"""`merge_states`: one global position from every replica's state, cheap enough for every step.

Each replica's `Stream.state()` holds what it has read; the global position
holds all of them, by rank, with what they share (split, files, epoch …) once.
A state passes a few cheap checks; only one that fails them is looked at more
closely, to say what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from vtrain.data.position_proof import SEAL, seal
from vtrain.data.stream_position import KIND, VERSION, check_kind, shown
from vtrain.errors import UsageError

_SHARED = ("split", "listing", "shuffle", "by_record", "epoch", "deal", "before", "world_size")
"""What every replica's state of one position has in common: `listing` is a digest of
`source`, which would cost more to compare at every step."""

_shared = itemgetter(*_SHARED)


def merge_states(states: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """One global position from `states`, every replica's `Stream.state()` (None from one
    that reads nothing is passed over): what each has consumed, so a resume deals out only
    the rest.

    States of another stream, a rank missing or given twice, or no state at all raise
    `UsageError`.
    """
    given = [s for s in states if s is not None]
    if not given:
        raise UsageError(
            "no states to merge",
            source="states",
            expected="Stream.state() of every replica that reads the split",
        )
    first = given[0]
    _check_state(first, 0)
    head = _shared(first)
    world_size = first["world_size"]
    by_rank: dict[int, Mapping[str, Any]] = {}
    counts: list[Any] = []
    for i, state in enumerate(given):
        if (
            type(state) is not dict
            or state.get("kind") != KIND
            or state.get("version") != VERSION
            or "replica" not in state
        ):
            _check_state(state, i)
        try:
            same = _shared(state) == head
        except KeyError:
            _check_state(state, i)
        if not same:
            _differ(state, first, i)
        rank = state.get("rank")
        if rank in by_rank or type(rank) is not int or not 0 <= rank < world_size:
            raise UsageError(
                "a rank out of range, or given twice",
                source=f"states[{i}].rank",
                value=rank,
                expected=f"each rank of 0 to {world_size - 1} once",
            )
        by_rank[rank] = state
        counts.append(state.get("counts"))
    if len(by_rank) < world_size:
        missing = [r for r in range(world_size) if r not in by_rank]
        raise UsageError(
            f"the states of rank {', '.join(map(str, missing))} are missing",
            source="states",
            value=f"{len(by_rank)} of {world_size}",
            expected=f"the state of every one of the {world_size} replicas",
            hint="each replica's position is part of the global one: gather all of them",
        )
    merged = {key: first[key] for key in ("kind", "version", "source", *_SHARED)}
    merged["counts"] = _merge_counts(counts)
    merged["replicas"] = [by_rank[r]["replica"] for r in range(world_size)]
    merged[SEAL] = seal(merged)  # a resume refuses the position if anything in it changes
    return merged


def _check_state(state: object, i: int) -> None:
    check_kind(state, f"states[{i}]")
    assert isinstance(state, Mapping)
    missing = [k for k in ("rank", "replica", *_SHARED) if k not in state]
    if missing:
        raise UsageError(
            f"not a replica's state: no {', '.join(missing)}",
            source=f"states[{i}]",
            expected="what Stream.state() returns (a merged position is merged already)",
        )


def _differ(state: Mapping[str, Any], first: Mapping[str, Any], i: int) -> None:
    key = next(k for k in _SHARED if state.get(k) != first.get(k))
    raise UsageError(
        f"the replicas' states differ in {key!r}",
        source=f"states[{i}].{key}",
        value=shown(state.get(key)),
        expected=f"{shown(first.get(key))}, as in states[0]: the states of one stream's "
        "replicas taken at the same step",
    )


def _merge_counts(given: list[Any]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for i, counts in enumerate(given):
        if type(counts) is not dict and not isinstance(counts, Mapping):
            raise UsageError(
                "not the record counts of files",
                source=f"states[{i}].counts",
                value=shown(counts),
                expected="{file index: records}, as Stream.state() gives",
            )
        merged.update(counts)
    if sum(map(len, given)) == len(merged) or all(c.items() <= merged.items() for c in given):
        return merged
    seen: dict[str, tuple[int, int]] = {}  # replicas that read the same file must agree
    for i, counts in enumerate(given):
        for f, n in counts.items():
            j, m = seen.setdefault(f, (i, n))
            if m != n:
                raise UsageError(
                    f"the replicas read different record counts of file {f}: {m} in "
                    f"states[{j}], {n} here",
                    source=f"states[{i}].counts",
                    expected="one count per file: a file that changed while it was read?",
                )
    raise AssertionError("unreachable: the counts disagree somewhere")
