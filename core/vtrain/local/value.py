"""`Value`: the base of the local job's values (Plan, Replica, Kill, the results).

They were frozen dataclasses; `import dataclasses` (which imports `inspect`) cost
`vtrain local run` about 10 ms of start-up, a fifth of its whole overhead over a
hand-written launcher (bench/local_cluster.py). `vtrain.frozen.Frozen` is the same
thing written out; this adds back what a frozen dataclass of hashable fields also has:
a hash, and copy and pickle support.
"""

from __future__ import annotations

from vtrain.frozen import Frozen


class Value(Frozen):
    """A `Frozen` value that hashes, copies and pickles by its fields, like a frozen dataclass."""

    __slots__ = ()

    # Frozen sets __hash__ to None (its values hold mappings); these hold none.
    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self._fields().values()))

    # Rebuilt through __init__: the default restores slots with setattr, which Frozen refuses.
    # (Every subclass's __init__ takes its fields in __slots__ order.)
    def __reduce__(self) -> tuple[type[Value], tuple[object, ...]]:
        return type(self), tuple(self._fields().values())
