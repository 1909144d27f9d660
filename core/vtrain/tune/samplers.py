"""Where each trial's parameters come from: grid, random, or optuna's model-based search.

A sampler is asked for trial number n (1, 2, …) and answers the same
parameters for the same n and seed, so a resumed study draws what the
interrupted one would have. Finished trials are told back with `observe`.
A conditional parameter is chosen only when its parent's value activates it:
a trial's parameters are the active ones, and only those reach it as flags.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from vtrain.errors import MissingExtraError
from vtrain.tune.study import Parameter, Study, Value

Parameters = dict[str, Value]


class Sampler(Protocol):
    """Suggests trial parameters and learns from finished trials."""

    def suggest(self, number: int) -> Parameters | None:
        """Parameters for trial `number` (1-based); None once the space is exhausted."""

    def observe(self, number: int, parameters: Mapping[str, Value], value: float | None) -> None:
        """A finished trial's final metric; None when it failed."""


def grid_values(p: Parameter) -> Sequence[Value]:
    """Every value grid search tries for one parameter (an INTEGER range is indexed, not built)."""
    if p.type == "INTEGER":
        assert p.min_value is not None and p.max_value is not None
        return range(int(p.min_value), int(p.max_value) + 1)
    return p.values


def _length(axis: Sequence[Value]) -> int:
    # len() of a range raises OverflowError past sys.maxsize; an int64 range can be longer.
    return axis.stop - axis.start if isinstance(axis, range) else len(axis)


def _position(axis: Sequence[Value], value: Value) -> int:
    return int(value) - axis.start if isinstance(axis, range) else list(axis).index(value)


def points(p: Parameter) -> int:
    """How many grid points `p` and its conditional parameters make together."""
    axis = grid_values(p)
    blocks = _blocks(p, axis)
    return _length(axis) - len(blocks) + sum(size for _, size in blocks)


def _blocks(p: Parameter, axis: Sequence[Value]) -> list[tuple[int, int]]:
    """(position, points) of each value of `p` that activates conditional parameters, in order."""
    found: dict[int, int] = {}
    for condition in p.conditions:
        for value in condition.parent_values:
            position = _position(axis, value)
            if position not in found:
                found[position] = math.prod(points(c) for c in p.children(axis[position]))
    return sorted(found.items())


def _decode(parameters: Sequence[Parameter], index: int) -> Parameters:
    """Point `index` of the grid of `parameters` together, the last changing fastest."""
    # Mixed radix instead of walking a product: resume jumps straight to trial n.
    point: Parameters = {}
    for p in reversed(parameters):
        index, i = divmod(index, points(p))
        point = _point(p, i) | point
    return point


def _point(p: Parameter, index: int) -> Parameters:
    """Point `index` of one parameter's grid: its value, then its active children's point."""
    # A value without children is one point; a value with children is as many points as their
    # grid has. The values are walked block by block, not one by one: an INTEGER range may
    # hold 2**63 values, a handful of which activate children.
    axis = grid_values(p)
    start = 0
    for position, size in _blocks(p, axis):
        run = position - start
        if index < run:
            return {p.parameter_id: axis[start + index]}
        index -= run
        if index < size:
            value = axis[position]
            return {p.parameter_id: value} | _decode(p.children(value), index)
        index -= size
        start = position + 1
    return {p.parameter_id: axis[start + index]}


class GridSampler:
    """Every combination, the last parameter changing fastest."""

    def __init__(self, study: Study) -> None:
        self.parameters = study.parameters
        self.size = math.prod(points(p) for p in study.parameters)

    def suggest(self, number: int) -> Parameters | None:
        if number > self.size:
            return None
        return _decode(self.parameters, number - 1)

    def observe(self, number: int, parameters: Mapping[str, Value], value: float | None) -> None:
        pass


def sample(p: Parameter, rng: random.Random) -> Value:
    """One random value of `p`, uniform in its scale."""
    if p.type in ("DISCRETE", "CATEGORICAL"):
        return rng.choice(p.values)
    assert p.min_value is not None and p.max_value is not None
    low, high = p.min_value, p.max_value
    if p.type == "INTEGER":
        # Integers are drawn over [low, high + 1) and floored, so each end is as likely as any.
        high += 1
    if p.scale == "LINEAR":
        # rng.uniform's low + (high - low) * u overflows to inf over a range wider than 1.8e308.
        u = rng.random()
        x = low * (1 - u) + high * u
    else:
        x = math.exp(rng.uniform(math.log(low), math.log(high)))
        if p.scale == "REVERSE_LOG":
            # Mirror the log scale: values are dense near the top of the range instead.
            x = high - (x - low)
    if p.type == "INTEGER":
        return min(max(math.floor(x), int(low)), int(high) - 1)
    return min(max(x, low), high)


def _draw(p: Parameter, rng: random.Random, drawn: Parameters) -> None:
    # Depth first, right after the parent: a study without conditions draws as it always did.
    value = drawn[p.parameter_id] = sample(p, rng)
    for child in p.children(value):
        _draw(child, rng, drawn)


class RandomSampler:
    """Independent draws; trial n's draw depends only on (seed, n)."""

    def __init__(self, study: Study, seed: int) -> None:
        self.parameters = study.parameters
        self.seed = seed

    def suggest(self, number: int) -> Parameters | None:
        rng = random.Random(f"{self.seed}/{number}")
        drawn: Parameters = {}
        for p in self.parameters:
            _draw(p, rng, drawn)
        return drawn

    def observe(self, number: int, parameters: Mapping[str, Value], value: float | None) -> None:
        pass


class OptunaSampler:
    """Vertex's default algorithm is model-based; locally that is optuna's TPE."""

    def __init__(self, study: Study, seed: int) -> None:
        try:
            import optuna
        except ImportError:
            raise MissingExtraError(
                "the model-based search (algorithm ALGORITHM_UNSPECIFIED)", "tune", module="optuna"
            ) from None
        self.optuna = optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.parameters = study.parameters
        self.all_parameters = study.all_parameters()
        self.distributions = {p.parameter_id: self._distribution(p) for p in self.all_parameters}
        # The top level is asked for up front, as optuna's fixed distributions; a conditional
        # parameter is suggested once its parent's value activates it (define-by-run).
        self.top = {p.parameter_id: self.distributions[p.parameter_id] for p in study.parameters}
        goal = optuna.study.StudyDirection
        direction = goal.MAXIMIZE if study.metric.goal == "MAXIMIZE" else goal.MINIMIZE
        self.study = optuna.create_study(
            direction=direction, sampler=optuna.samplers.TPESampler(seed=seed)
        )
        self.asked: dict[int, Any] = {}

    def _distribution(self, p: Parameter) -> Any:
        d = self.optuna.distributions
        if p.type in ("DISCRETE", "CATEGORICAL"):
            return d.CategoricalDistribution(p.values)
        # optuna has no reverse-log scale: it searches the mirrored value on a log scale.
        log = p.scale != "LINEAR"
        if p.type == "INTEGER":
            return d.IntDistribution(int(p.min_value or 0), int(p.max_value or 0), log=log)
        return d.FloatDistribution(p.min_value, p.max_value, log=log)

    def _suggest(self, trial: Any, p: Parameter) -> None:
        d, name = self.distributions[p.parameter_id], p.parameter_id
        kinds = self.optuna.distributions
        if isinstance(d, kinds.CategoricalDistribution):
            trial.suggest_categorical(name, d.choices)
        elif isinstance(d, kinds.IntDistribution):
            trial.suggest_int(name, d.low, d.high, log=d.log)
        else:
            trial.suggest_float(name, d.low, d.high, log=d.log)

    def _children(self, trial: Any, p: Parameter) -> None:
        for child in p.children(trial.params[p.parameter_id]):
            self._suggest(trial, child)
            self._children(trial, child)

    def _mirror(self, parameters: Mapping[str, Value]) -> Parameters:
        out = dict(parameters)
        for p in self.all_parameters:
            if p.parameter_id not in out:
                continue  # a conditional parameter its parent left out
            if p.scale == "REVERSE_LOG" and p.type in ("DOUBLE", "INTEGER"):
                assert p.min_value is not None and p.max_value is not None
                mirrored = p.min_value + p.max_value - float(out[p.parameter_id])
                out[p.parameter_id] = int(mirrored) if p.type == "INTEGER" else mirrored
        return out

    def suggest(self, number: int) -> Parameters | None:
        trial = self.study.ask(self.top)
        for p in self.parameters:
            self._children(trial, p)
        self.asked[number] = trial
        return self._mirror(trial.params)

    def observe(self, number: int, parameters: Mapping[str, Value], value: float | None) -> None:
        state = self.optuna.trial.TrialState
        trial = self.asked.pop(number, None)
        if trial is not None:
            if value is None:
                self.study.tell(trial, state=state.FAIL)
            else:
                self.study.tell(trial, value)
            return
        # A trial finished before a resume: replay it so the model starts where it left off.
        params = self._mirror(parameters)
        self.study.add_trial(
            self.optuna.trial.create_trial(
                params=params,
                distributions={name: self.distributions[name] for name in params},
                value=value,
                state=state.COMPLETE if value is not None else state.FAIL,
            )
        )


def make_sampler(study: Study, seed: int) -> Sampler:
    """The sampler for the study's algorithm."""
    if study.algorithm == "GRID_SEARCH":
        return GridSampler(study)
    if study.algorithm == "RANDOM_SEARCH":
        return RandomSampler(study, seed)
    return OptunaSampler(study, seed)


def grid_size(study: Study) -> int | None:
    """How many points grid search has; None for the other algorithms."""
    return GridSampler(study).size if study.algorithm == "GRID_SEARCH" else None


__all__ = ["GridSampler", "OptunaSampler", "RandomSampler", "Sampler", "make_sampler", "sample"]
