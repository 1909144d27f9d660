"""`Frozen`: the base of the values every replica builds at start-up (ClusterInfo, RunContext).

They are what frozen dataclasses would be, written out, because `import
dataclasses` pulls in `inspect` and costs more than all the rest of
`ClusterInfo.from_env()` together (about 14 ms of a 20 ms budget; see
bench/cluster_info.py). Values that are not on that path use dataclasses.
"""

from __future__ import annotations

from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NoReturn, TypeVar

    Self = TypeVar("Self", bound="Frozen")


class FrozenError(AttributeError):
    """An attempt to change a field of a frozen value."""


class Frozen:
    """Fields are the subclass's `__slots__`, set once in `__init__` with `_init_from`."""

    __slots__ = ()

    def _init_from(self, values: Mapping[str, Any]) -> None:
        """Set every field from `values` by name: `self._init_from(locals())` in `__init__`."""
        names: tuple[str, ...] = type(self).__slots__
        for name in names:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise FrozenError(f"cannot assign to {name!r}: a {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> NoReturn:
        raise FrozenError(f"cannot delete {name!r}: a {type(self).__name__} is frozen")

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would restore the slots through __setattr__, which refuses: a value
        # handed to a spawned process (a DataLoader worker, a multiprocessing pool) must pickle.
        # Read-only mappings (MappingProxyType) do not pickle: they travel as _Proxy dicts.
        return (_restore, (type(self), _plain(self._fields())))

    def _fields(self) -> dict[str, Any]:
        names: tuple[str, ...] = type(self).__slots__
        return {name: getattr(self, name) for name in names}

    def replace(self: Self, **changes: Any) -> Self:
        """A copy with the fields that `changes` names changed (what `dataclasses.replace`
        does)."""
        return type(self)(**{**self._fields(), **changes})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frozen) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    # No __hash__: the values hold mappings, as a frozen dataclass's would, and those
    # are not hashable anyway.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({shown})"


class _Proxy(dict):  # type: ignore[type-arg]
    """A read-only mapping on its way through pickle."""


def _plain(value: Any) -> Any:
    if isinstance(value, MappingProxyType):
        return _Proxy({k: _plain(v) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    return value


def _frozen(value: Any) -> Any:
    if isinstance(value, _Proxy):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if type(value) is tuple:
        return tuple(_frozen(v) for v in value)
    return value


def _restore(kind: type[Frozen], fields: Mapping[str, Any]) -> Frozen:
    """A pickled frozen value, back as it was (no __init__: it was checked when first built)."""
    value = object.__new__(kind)
    for name, field in fields.items():
        object.__setattr__(value, name, _frozen(field))
    return value
