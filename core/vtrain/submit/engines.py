"""The engines `vtrain submit` knows: one table of the `ENGINE` each engine's folder exports.

An engine is its folder (`vertex/`, `aiplatform/`, `kubeflow/`): its rules, flags,
renderer, reader, sender and rehearsal, in one `vtrain.submit.engine.Engine`. A new
engine is a new folder and its name in the line below; nothing else names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vtrain.submit import aiplatform, kubeflow, vertex
from vtrain.submit.engine import Engine
from vtrain.submit.problems import Rules

# Job files are told apart in this order: a Kubernetes object first (kind and apiVersion),
# then AI Platform's trainingInput; Vertex's jobSpec and trialJobSpec last.
ENGINES: Mapping[str, Engine] = MappingProxyType(
    {engine.name: engine for engine in (kubeflow.ENGINE, aiplatform.ENGINE, vertex.ENGINE)}
)
RULES: Mapping[str, Rules] = MappingProxyType(
    {name: engine.rules for name, engine in ENGINES.items()}
)
"""Each engine's rules, which `JobOptions.from_options` runs while a command line is checked."""
