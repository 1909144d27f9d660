"""The job's pools: one per role, with its replicas, image, machine and accelerator.

A per-role setting falls back to the chief's, as AI Platform's images do; the
chief's falls back to the job-wide --machine-type and --accelerator. The one
exception: parameter servers and evaluators get no accelerator unless their
own flag asks for one, as they rarely use one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import Problems as Collector
from vtrain.errors import VtrainError
from vtrain.submit.problems import Problems
from vtrain.submit.request import JobRequest
from vtrain.submit.values import Accelerator, parse_accelerator

ROLES = (CHIEF, WORKER, PS, EVALUATOR)
# How many replicas a role has is said by these flags; the chief is always one.
COUNT_FLAGS = {WORKER: "--workers", PS: "--ps", EVALUATOR: "--evaluators"}
# The roles that share the chief's accelerator unless told otherwise: the trainers. A
# parameter server or an evaluator on the chief's GPU would mostly leave it idle.
INHERIT_ACCELERATOR = (CHIEF, WORKER)


@dataclass(frozen=True)
class Pool:
    """One role of the job: how many replicas, on what image, machine and accelerator."""

    role: str
    count: int
    image: str | None
    machine_type: str | None
    accelerator: Accelerator | None
    machine_flag: str = field(default="--machine-type", compare=False)
    """The flag that set the machine (or would), for errors about it."""
    accelerator_flag: str = field(default="--accelerator", compare=False)
    """The flag that set the accelerator (or would), for errors about it."""


def counts(request: JobRequest) -> dict[str, int]:
    """Replicas per role, as given (the chief: one)."""
    return {CHIEF: 1, WORKER: request.workers, PS: request.ps, EVALUATOR: request.evaluators}


def build_pools(
    request: JobRequest, default_machine: str | None, problems: Problems
) -> tuple[Pool, ...]:
    """Chief, workers, ps and evaluators, in that order; a role with no replicas has count 0."""
    machines = request.role_machine_types
    chief_machine = machines.get(CHIEF) or request.machine_type or default_machine
    chief_machine_flag = "--chief-machine-type" if machines.get(CHIEF) else "--machine-type"
    chief_accelerator = _accelerator("--accelerator", request.accelerator, problems)
    chief_accelerator_flag = "--accelerator"
    if request.role_accelerators.get(CHIEF) is not None:
        chief_accelerator_flag = "--chief-accelerator"
        chief_accelerator = _accelerator(
            chief_accelerator_flag, request.role_accelerators[CHIEF], problems
        )
    given = counts(request)
    for role, flag in COUNT_FLAGS.items():
        if given[role] < 0:
            problems.bad(flag, "a replica count cannot be negative", given[role], "0 or more")
    pools = [
        Pool(
            CHIEF,
            1,
            request.image,
            chief_machine,
            chief_accelerator,
            chief_machine_flag,
            chief_accelerator_flag,
        )
    ]
    for role in ROLES[1:]:
        accelerator = chief_accelerator if role in INHERIT_ACCELERATOR else None
        accelerator_flag = chief_accelerator_flag if role in INHERIT_ACCELERATOR else ""
        if request.role_accelerators.get(role) is not None:
            accelerator_flag = f"--{role}-accelerator"
            accelerator = _accelerator(accelerator_flag, request.role_accelerators[role], problems)
        image = request.role_images.get(role) or request.image
        # An unset per-role machine falls back to the chief's, as images do.
        machine = machines.get(role) or chief_machine
        machine_flag = f"--{role}-machine-type" if machines.get(role) else chief_machine_flag
        pools.append(
            Pool(
                role,
                max(given[role], 0),
                image,
                machine,
                accelerator,
                machine_flag,
                accelerator_flag or f"--{role}-accelerator",
            )
        )
    if not request.image and not request.python_package:
        problems.bad(
            "--image", "missing", None, "the chief's container image, e.g. gcr.io/p/train:1"
        )
    for role, flag in COUNT_FLAGS.items():
        if request.role_images.get(role) and not given[role] > 0:
            problems.bad(
                f"--{role}-image",
                f"the job has no {role} replicas",
                request.role_images[role],
                f"{flag} N with it",
            )
    return tuple(pools)


def _accelerator(flag: str, text: str | None, problems: Problems) -> Accelerator | None:
    if text is None:
        return None
    try:
        return parse_accelerator(text, flag)
    except VtrainError as e:
        problems.add(e)
        return None


def unknown_accelerators(
    pools: Iterable[Pool], known: list[str], what: str, problems: Collector
) -> None:
    """One problem per flag whose accelerator type is not in `known` ("not <what>")."""
    seen: set[str] = set()
    for pool in pools:
        a = pool.accelerator
        if pool.count and a is not None and a.type not in known and a.flag not in seen:
            seen.add(a.flag)
            problems.bad(a.flag, f"not {what}", a.type, "one of " + ", ".join(known))
