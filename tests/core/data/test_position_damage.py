"""Issue 42, item 3: a well-typed but damaged position is refused, naming the field.

Positions are real: taken from streams at world sizes 3 and 2 on 60 records (6
files of 10) and saved as JSON. Each damage of the issue's list is refused, with
its seal and without it (as a vtrain before the seal saved them). The class:
any damage of those kinds, at any stop, shuffled or not, by record or by file,
is refused or resumes to every record exactly once; any change at all to a
sealed position is refused.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import Counter
from collections.abc import Callable
from itertools import islice
from typing import Any

import pytest
from data_files import write_split
from fuzzing import examples
from hypothesis import event, given
from hypothesis import strategies as st

from vtrain import ConfigError
from vtrain.data import merge_states, stream
from vtrain.data.position_proof import SEAL

FILES, PER_FILE = 6, 10
Position = dict[str, Any]


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("split") / "d"
    write_split(folder, FILES, per_file=PER_FILE)
    return str(folder / "*.jsonl")


@pytest.fixture(scope="module")
def splits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The same records as CSV and TFRecord: formats in which every record passed is given."""
    found = {}
    for kind in ("csv", "tfrecord"):
        folder = tmp_path_factory.mktemp(kind) / "d"
        write_split(folder, FILES, per_file=PER_FILE, kind=kind)
        found[kind] = str(folder / f"*.{kind}")
    return found


def ident(record: Any) -> tuple[int, int]:
    if isinstance(record, bytes):
        record = json.loads(record)
    return int(record["file"]), int(record["row"])


def take(uri: str, takes: list[int], **options: Any) -> tuple[Position, list[tuple[int, int]]]:
    """The saved position after replica r of len(takes) took takes[r] records, and those."""
    streams = [
        stream(uri=uri, rank=r, world_size=len(takes), environ={}, **options)
        for r in range(len(takes))
    ]
    seen = [ident(x) for one, n in zip(streams, takes, strict=True) for x in islice(one, n)]
    return json.loads(json.dumps(merge_states([s.state() for s in streams]))), seen


def resume(uri: str, position: Position, world_size: int, **options: Any) -> list[tuple[int, int]]:
    """Every record the rest of the epoch gives, read by `world_size` replicas."""
    streams = [
        stream(uri=uri, rank=r, world_size=world_size, environ={}, resume=position, **options)
        for r in range(world_size)
    ]
    if streams[0].epoch != position["epoch"]:  # the epoch was used up
        return []
    return [ident(x) for one in streams for x in one]


def unsealed(position: Position) -> Position:
    """The position as a vtrain before the seal saved it."""
    return {k: v for k, v in position.items() if k != SEAL}


def lane_of(value: Any) -> dict[str, Any]:
    """A lane as a dict, a whole file's index spelled out."""
    if isinstance(value, int):
        return {"files": [value], "offset": 0, "records": 0, "skip": 0, "step": 1}
    lane: dict[str, Any] = value
    return lane


# The issue's damages, each as (what it does, the field it names); positions at 3 × [5, 15, 15]
# stand with replica 0 5 records into its first file, the others 5 into their second.
def copy_replica(p: Position) -> None:
    p["replicas"][1] = copy.deepcopy(p["replicas"][0])


def drop_replica(p: Position) -> None:
    del p["replicas"][2]
    p["world_size"] = 2


def append_work(p: Position) -> None:
    p["replicas"][0]["work"].append(1)


def remove_work(p: Position) -> None:
    del p["replicas"][0]["work"][0]
    p["replicas"][0]["done"] = 0


def done_plus_one(p: Position) -> None:
    r = p["replicas"][0]
    r["done"] += 1
    r["current"] = r["work"][r["done"]] if r["done"] < len(r["work"]) else None


def all_done(p: Position) -> None:
    r = p["replicas"][0]
    r["done"], r["current"] = len(r["work"]), None


def offset_zero(p: Position) -> None:
    p["replicas"][0]["current"]["offset"] = 0


def skip_edited(p: Position) -> None:
    p["replicas"][0]["current"]["skip"] = 2


def step_edited(p: Position) -> None:
    p["replicas"][0]["current"]["step"] = 3


def files_doubled(p: Position) -> None:
    p["replicas"][0]["current"]["files"] = [0, 0]


def huge_epoch(p: Position) -> None:
    p["epoch"] = 10**30


def listing_changed(p: Position) -> None:
    p["listing"] = "0" * 16


def by_record_flipped(p: Position) -> None:
    p["by_record"] = not p["by_record"]


ISSUE_DAMAGES: list[tuple[Callable[[Position], None], str]] = [
    (copy_replica, r"replicas\[1\]\.work"),
    (drop_replica, r"replicas\[0\]\.work"),
    (append_work, r"replicas\[0\]\.work"),
    (remove_work, r"replicas\[0\]\.work"),
    (done_plus_one, r"replicas\[0\]\.done"),
    (all_done, r"replicas\[0\]\.done"),
    (offset_zero, r"replicas\[0\]\.current\.records"),
    (skip_edited, r"replicas\[0\]\.current\.skip"),
    (step_edited, r"replicas\[0\]\.current\.step"),
    (files_doubled, r"replicas\[0\]\.current\.files"),
    (huge_epoch, r"epoch: a damaged position \(got 10{30}\); expected an int of at most 2\*\*53"),
    (listing_changed, r"listing: a damaged position \(got '0{16}'\); expected the digest"),
    (by_record_flipped, r"replicas\[0\]\.work"),
]


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "unsealed"])
@pytest.mark.parametrize("world_size", [3, 2])
@pytest.mark.parametrize(
    ("damage", "field"), ISSUE_DAMAGES, ids=lambda d: getattr(d, "__name__", "")
)
def test_each_damage_of_the_issue_is_one_config_error_naming_its_field(
    split: str,
    damage: Callable[[Position], None],
    field: str,
    world_size: int,
    sealed: bool,
) -> None:
    position, _ = take(split, [5, 15, 15])
    position = position if sealed else unsealed(position)
    damage(position)
    with pytest.raises(ConfigError, match=rf"^resume: {field}"):
        resume(split, position, world_size)


@pytest.mark.parametrize("world_size", [3, 2])
def test_an_undamaged_position_resumes_to_every_record_once(split: str, world_size: int) -> None:
    for keep in (lambda p: p, unsealed):
        position, seen = take(split, [15, 15, 15])
        rest = resume(split, keep(position), world_size)
        assert sorted(seen + rest) == [(f, r) for f in range(FILES) for r in range(PER_FILE)]


def test_a_change_only_the_seal_sees_is_refused(split: str) -> None:
    position, _ = take(split, [15, 15, 15])
    # Fewer records given out than read: blank lines are passed and not given, so the
    # structure cannot tell; the seal can.
    position["replicas"][0]["read"] -= 1
    with pytest.raises(
        ConfigError, match=r"^resume: digest: a damaged position \(got '[0-9a-f]{32}'\)"
    ):
        resume(split, position, 3)
    resume(split, unsealed(position), 3)  # unsealed, a count of progress cannot be proved


def test_a_deal_goes_on_as_it_was_dealt_whatever_by_record_a_resume_passes(split: str) -> None:
    position, seen = take(split, [5, 5, 5])  # dealt by file
    streams = [
        stream(uri=split, rank=r, world_size=3, environ={}, resume=position, by_record=True)
        for r in range(3)
    ]
    seen += [ident(x) for one in streams for x in islice(one, 3)]
    again = json.loads(json.dumps(merge_states([s.state() for s in streams])))
    assert again["by_record"] is False  # the work is still the deal by file
    seen += resume(split, again, 2, by_record=True)
    assert sorted(seen) == [(f, r) for f in range(FILES) for r in range(PER_FILE)]


@st.composite
def saved(draw: st.DrawFn) -> dict[str, Any]:
    """A real stop: world size 3 or 2, shuffled or not, by record or by file."""
    world_size = draw(st.sampled_from([3, 2]))
    by_record = draw(st.booleans())
    options: dict[str, Any] = {"by_record": by_record}
    if draw(st.booleans()):
        options.update(shuffle_seed=draw(st.integers(0, 2**32)), buffer=draw(st.integers(1, 8)))
    takes = draw(st.lists(st.integers(0, 25), min_size=world_size, max_size=world_size))
    return {"options": options, "takes": takes, "then": draw(st.sampled_from([3, 2]))}


KINDS = [
    copy_replica,
    drop_replica,
    append_work,
    remove_work,
    done_plus_one,
    all_done,
    offset_zero,
    skip_edited,
    step_edited,
    files_doubled,
    huge_epoch,
    listing_changed,
    by_record_flipped,
]


def damaged(draw: st.DrawFn, position: Position) -> Position:
    """`position` with a damage of the issue's kinds, at a random replica and item."""
    p = copy.deepcopy(position)
    replicas = p["replicas"]
    r = draw(st.integers(0, len(replicas) - 1))
    one = replicas[r]
    kind: Any = draw(st.sampled_from([*KINDS, "current", "work", "done"]))
    if kind == "current" and one["current"] is not None and "lanes" not in lane_of(one["current"]):
        lane = one["current"] = lane_of(one["current"])
        field = draw(st.sampled_from(["offset", "records", "skip", "step", "files"]))
        if field == "files":
            lane["files"] = draw(st.lists(st.integers(0, FILES - 1), min_size=1, max_size=3))
        elif field == "offset":  # the issue's; another record's start only the seal can tell
            lane["offset"] = 0
        else:
            lane[field] = max(lane[field] + draw(st.sampled_from([-2, -1, 1, 2])), 1)
    elif kind == "work":
        work = one["work"]
        if work and draw(st.booleans()):
            del work[draw(st.integers(0, len(work) - 1))]
            one["done"] = min(one["done"], len(work))
            if one["done"] == len(work):
                one["current"] = None
        else:
            work.insert(draw(st.integers(0, len(work))), draw(st.integers(0, FILES - 1)))
    elif kind == "done":
        one["done"] = draw(st.integers(0, len(one["work"])))
        at = one["done"]
        one["current"] = one["work"][at] if at < len(one["work"]) else None
    elif callable(kind):
        with contextlib.suppress(IndexError, KeyError, TypeError):  # not one it can take
            kind(p)
    return p


@examples(60)
@given(saved(), st.sampled_from(["csv", "tfrecord"]), st.data())
def test_a_damaged_unsealed_position_is_refused_or_reads_every_record_once(
    splits: dict[str, str], s: dict[str, Any], kind: str, data: st.DataObject
) -> None:
    # Not JSON Lines: a cursor counts its blank lines as records and gives none of them out, so
    # without the seal a replica that claims to have read a lane's rest cannot be told from one
    # that passed only blank lines. The seal refuses that (the test below).
    split = splits[kind]
    position, seen = take(split, s["takes"], **s["options"])
    broken = damaged(data.draw, unsealed(position))
    try:
        rest = resume(split, broken, s["then"], **s["options"])
    except ConfigError as e:
        assert str(e).startswith("resume: "), e
        event("refused")
        return
    event("resumed")
    every = Counter(seen + rest)
    assert every == Counter((f, r) for f in range(FILES) for r in range(PER_FILE))


@examples(60)
@given(saved(), st.data())
def test_a_damage_of_the_issue_to_a_sealed_position_is_always_refused(
    split: str, s: dict[str, Any], data: st.DataObject
) -> None:
    position, _ = take(split, s["takes"], **s["options"])
    broken = damaged(data.draw, position)
    if broken == position:  # a damage this position could not take
        return
    with pytest.raises(ConfigError, match=r"^resume: [\w.\[\]]+: a damaged position"):
        resume(split, broken, s["then"], **s["options"])


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths to every int, str and bool of a JSON value."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in leaves(v, (*path, i))]
    return [path]


@examples(60)
@given(saved(), st.data())
def test_any_change_to_a_sealed_position_is_refused(
    split: str, s: dict[str, Any], data: st.DataObject
) -> None:
    position, _ = take(split, s["takes"], **s["options"])
    path = data.draw(st.sampled_from(leaves(position)))
    broken = copy.deepcopy(position)
    *head, last = path
    holder = broken
    for key in head:
        holder = holder[key]
    old = holder[last]
    choices: list[Any]
    if isinstance(old, bool):
        choices = [not old, None, 0]
    elif isinstance(old, int):
        choices = [old + 1, old - 1, 0, None, "x", True]
    elif isinstance(old, str):
        choices = [old + "x", old[:-1], None, 0]
    else:
        choices = [0, "x", []]
    new = data.draw(st.sampled_from(choices))
    if new == old and type(new) is type(old):
        return
    holder[last] = new
    with pytest.raises(ConfigError, match=r"^(resume|[^:]*\.jsonl): "):
        resume(split, broken, s["then"], **s["options"])
