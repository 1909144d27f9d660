"""The machines Vertex trains on and the accelerators each holds: `machines.json`, as rules.

The table is data, with its sources and the date it was checked. `problem`
answers one question per pool: would Vertex take this machine with this many
of this accelerator? A refusal names what would be taken instead: the
machines that hold that accelerator, or the counts this machine holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

N1 = "n1"


@dataclass(frozen=True)
class Table:
    """`machines.json`, read."""

    cpu_machines: Mapping[str, tuple[int, ...]]
    """Machine shape ("n1-standard") -> its sizes (vCPUs)."""
    n1_accelerators: Mapping[str, Mapping[int, int]]
    """Accelerator -> {count: the most vCPUs an N1 machine may have with that many}."""
    accelerator_machines: Mapping[str, Mapping[str, tuple[int, ...]]]
    """Machine -> {accelerator: counts}: machines that come with their accelerators."""
    checked: str
    sources: tuple[str, ...]

    def machine_types(self) -> list[str]:
        """Every machine type in the table."""
        cpu = [f"{shape}-{size}" for shape, sizes in self.cpu_machines.items() for size in sizes]
        return cpu + list(self.accelerator_machines)

    def accelerators(self) -> set[str]:
        """Every accelerator the table names."""
        bound = {a for held in self.accelerator_machines.values() for a in held}
        return bound | set(self.n1_accelerators)

    def machines_for(self, accelerator: str, besides: str = "") -> str:
        """The machines that hold `accelerator` (but `besides`), with their counts, in words."""
        found = [
            f"{machine} ({' or '.join(map(str, held[accelerator]))})"
            for machine, held in self.accelerator_machines.items()
            if accelerator in held and machine != besides
        ]
        if accelerator in self.n1_accelerators:
            counts = ", ".join(map(str, self.n1_accelerators[accelerator]))
            found.append(f"N1 machines (n1-standard-*, n1-highmem-*, n1-highcpu-*: {counts})")
        return ", ".join(found) or f"none in vtrain's table (checked {self.checked})"


@cache
def table() -> Table:
    """The table in `machines.json`."""
    text = resources.files(__package__).joinpath("machines.json").read_text(encoding="utf-8")
    data = json.loads(text)
    n1 = {k: v for k, v in data["n1_accelerators"].items() if k != "about"}
    bound = {k: v for k, v in data["accelerator_machines"].items() if k != "about"}
    return Table(
        cpu_machines={shape: tuple(sizes) for shape, sizes in data["cpu_machines"].items()},
        n1_accelerators={
            a: {int(c): cpus for c, cpus in limits.items()} for a, limits in n1.items()
        },
        accelerator_machines={
            m: {a: tuple(c) for a, c in held.items()} for m, held in bound.items()
        },
        checked=data["checked"],
        sources=tuple(data["sources"]),
    )


def _vcpus(machine: str) -> int | None:
    """The vCPUs of a table machine named SHAPE-SIZE ("n1-highmem-16": 16)."""
    shape, _, size = machine.rpartition("-")
    sizes = table().cpu_machines.get(shape, ())
    return int(size) if size.isdigit() and int(size) in sizes else None


def unknown(machine: str) -> str | None:
    """What Vertex takes instead of `machine`, when the table does not know it; else None."""
    t = table()
    if machine in t.accelerator_machines or _vcpus(machine) is not None:
        return None
    family = machine.split("-", 1)[0]
    same = [m for m in t.machine_types() if m.split("-", 1)[0] == family]
    if same:
        return "one of " + ", ".join(same)
    families = sorted({m.split("-", 1)[0] for m in t.machine_types()})
    return f"a machine of the {', '.join(families)} families, e.g. n1-standard-4"


def problem(machine: str, accelerator: str | None, count: int) -> tuple[str, str] | None:
    """(problem, expected) when Vertex would refuse `machine` with `count` x `accelerator`."""
    t = table()
    held = t.accelerator_machines.get(machine)
    if held is not None:
        return _attached(machine, held, accelerator, count)
    if accelerator is None:
        return None
    elsewhere = f"a machine that holds {accelerator}: {t.machines_for(accelerator)}"
    if not machine.startswith(N1 + "-"):
        return f"{machine} holds no accelerator", f"{elsewhere}; or no accelerator"
    limits = t.n1_accelerators.get(accelerator)
    if limits is None:
        return f"an N1 machine cannot hold {accelerator}", elsewhere
    if count not in limits:
        counts = ", ".join(map(str, limits))
        return (
            f"{accelerator} comes {counts} to an N1 machine",
            f"{accelerator}:N for N in {counts}",
        )
    vcpus = _vcpus(machine)
    if vcpus is not None and vcpus > limits[count]:
        more = [c for c, most in limits.items() if most >= vcpus]
        instead = f"{accelerator}:{more[0]} or more on it, or " if more else ""
        return (
            f"{machine} has {vcpus} vCPUs; {count} {accelerator} allows at most {limits[count]}",
            f"{instead}an N1 machine of at most {limits[count]} vCPUs",
        )
    return None


def _attached(
    machine: str, held: Mapping[str, tuple[int, ...]], accelerator: str | None, count: int
) -> tuple[str, str] | None:
    """A machine that comes with its accelerators: exactly those, as many as it has."""
    comes = " or ".join(f"{a}:{c}" for a, counts in held.items() for c in counts)
    if accelerator is None:
        return f"{machine} comes with {comes}, and none is asked for", f"{comes} beside it"
    if accelerator not in held:
        return (
            f"{machine} comes with {comes}, not {accelerator}",
            f"{comes}; {accelerator} runs on {table().machines_for(accelerator)}",
        )
    if count not in held[accelerator]:
        others = table().machines_for(accelerator, besides=machine)
        return f"{machine} holds {comes}", f"{comes}, or another machine: {others}"
    return None
