"""The base every framework plugin derives from: a name, an availability check, `configure`."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from vtrain.errors import MissingExtraError, UsageError

if TYPE_CHECKING:
    from vtrain.cluster import ClusterInfo


class Plugin(ABC):
    """Turns a `ClusterInfo` into one framework's own distributed setup."""

    name: ClassVar[str]
    """The key users pass to `vtrain.plugins.get`, e.g. "pytorch"."""
    extra: ClassVar[str]
    """The pip extra that installs the framework: ``pip install "vtrain[<extra>]"``."""
    requires: ClassVar[tuple[str, ...]] = ()
    """Top-level modules the framework needs; checked without importing them."""

    def is_available(self) -> bool:
        """True when every required module is installed (nothing is imported to find out)."""
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in self.requires)

    def require(self, module: str) -> ModuleType:
        """Import a framework module, or say which extra installs it."""
        try:
            return importlib.import_module(module)
        except ImportError as e:
            missing = e.name or module
            raise MissingExtraError(f"the {self.name} plugin", self.extra, module=missing) from e

    def reject_unknown(self, options: Mapping[str, Any], known: Sequence[str]) -> None:
        """Refuse keyword options this plugin does not take, naming those it does."""
        if options:
            raise UsageError(
                "unknown option",
                source=f"{self.name}.configure",
                value=sorted(options),
                expected=", ".join(known),
            )

    @abstractmethod
    def configure(self, info: ClusterInfo | None = None, **options: Any) -> Any:
        """Set up the framework for this replica and return its native handle."""

    def __repr__(self) -> str:
        return f"<vtrain plugin {self.name!r}>"
