"""One replica of a local job: its role, its index in that role, its loopback host and port."""

from __future__ import annotations

from vtrain.frozen import Frozen

LOOPBACK = "127.0.0.1"


class Replica(Frozen):
    """One replica of the job: its role, its index in that role, its loopback host and port."""

    __slots__ = ("role", "index", "port", "host")
    role: str
    index: int
    port: int
    host: str
    """Its own loopback address (127.0.0.2, 127.0.0.3...: a machine of its own), or 127.0.0.1."""

    def __init__(self, role: str, index: int, port: int = 0, host: str = LOOPBACK) -> None:
        self._init_from(locals())

    @property
    def name(self) -> str:
        """The replica's display name, e.g. ``worker-1``."""
        return f"{self.role}-{self.index}"

    @property
    def address(self) -> str:
        """``HOST:PORT``, the address every platform variable names for this replica."""
        return f"{self.host}:{self.port}"
