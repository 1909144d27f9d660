"""The engines' own libraries, imported when a submit path needs them and not before.

This is the only module of `vtrain.submit` that imports them: the Vertex SDK
and protobuf, grpc and google-api-core, the ml v1 discovery document of
google-api-python-client, the Kubeflow training, Trainer and Katib models, the
Kubernetes client and urllib3, PyYAML, and `build` for --python-package.
Every loader raises `MissingExtraError` naming the `submit` extra when its
library is missing, so `vtrain submit` never ends in a bare ImportError.
Through importlib: the libraries stay `Any` to the type checker, untyped as most are.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import types
from functools import cache
from typing import Any

from vtrain.errors import MissingExtraError

_AIPLATFORM = "google.cloud.aiplatform_v1"
# The Vertex messages a job needs, and nothing of the 200 other modules of the package.
_VERTEX_TYPE_MODULES = ("custom_job", "hyperparameter_tuning_job", "study", "accelerator_type")


def _missing(what: str, module: str) -> MissingExtraError:
    return MissingExtraError(what, "submit", module=module)


def vertex_api() -> Any:
    """The whole `google.cloud.aiplatform_v1`: types, JobServiceClient and its transports."""
    try:
        return importlib.import_module(_AIPLATFORM)
    except ImportError:
        raise _missing("sending a Vertex job", "google-cloud-aiplatform") from None


@cache
def vertex_types() -> types.SimpleNamespace:
    """CustomJob, HyperparameterTuningJob and AcceleratorType, the SDK's own message classes."""
    loaded = sys.modules.get(_AIPLATFORM)
    if loaded is not None and hasattr(loaded, "CustomJob"):
        return types.SimpleNamespace(
            CustomJob=loaded.CustomJob,
            HyperparameterTuningJob=loaded.HyperparameterTuningJob,
            AcceleratorType=loaded.AcceleratorType,
        )
    try:
        spec = importlib.util.find_spec(_AIPLATFORM)
    except ImportError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise _missing("rendering a Vertex job", "google-cloud-aiplatform")
    # The package's __init__ imports every service and type (about 1.4 s); a render needs
    # four type modules (0.1 s). Stand-in parents let those load alone; they are removed
    # afterwards, so a later `import google.cloud.aiplatform_v1` runs the real __init__
    # and finds these modules already loaded, the same classes.
    base = spec.submodule_search_locations[0]
    stand_ins = {_AIPLATFORM: base, f"{_AIPLATFORM}.types": os.path.join(base, "types")}
    for name, path in stand_ins.items():
        module = types.ModuleType(name)
        module.__path__ = [path]
        sys.modules[name] = module
    try:
        loaded_types = {
            m: importlib.import_module(f"{_AIPLATFORM}.types.{m}") for m in _VERTEX_TYPE_MODULES
        }
    finally:
        for name in stand_ins:
            sys.modules.pop(name, None)
    return types.SimpleNamespace(
        CustomJob=loaded_types["custom_job"].CustomJob,
        HyperparameterTuningJob=loaded_types["hyperparameter_tuning_job"].HyperparameterTuningJob,
        AcceleratorType=loaded_types["accelerator_type"].AcceleratorType,
    )


def json_format() -> Any:
    """`google.protobuf.json_format`: MessageToDict and the ParseError of `from_json`."""
    try:
        return importlib.import_module("google.protobuf.json_format")
    except ImportError:
        raise _missing("rendering a Vertex job", "protobuf") from None


def message_to_dict(message: Any) -> dict[str, Any]:
    """A proto-plus message as its REST JSON (camelCase, defaults left out)."""
    result: dict[str, Any] = json_format().MessageToDict(type(message).pb(message))
    return result


def vertex_grpc_transport(endpoint: str) -> Any:
    """A JobService gRPC transport over a plain channel to `endpoint`, as emulators are reached."""
    try:
        grpc = importlib.import_module("grpc")
        transports = importlib.import_module(f"{_AIPLATFORM}.services.job_service.transports")
    except ImportError:
        raise _missing("sending a Vertex job", "google-cloud-aiplatform") from None
    return transports.JobServiceGrpcTransport(channel=grpc.insecure_channel(endpoint))


def api_exceptions() -> Any:
    """`google.api_core.exceptions`: what the Vertex client raises when the service refuses."""
    try:
        return importlib.import_module("google.api_core.exceptions")
    except ImportError:
        raise _missing("sending a Vertex job", "google-api-core") from None


def credentials_error() -> type[Exception]:
    """`google.auth`'s DefaultCredentialsError: no Application Default Credentials."""
    try:
        error: type[Exception] = importlib.import_module(
            "google.auth.exceptions"
        ).DefaultCredentialsError
    except ImportError:
        raise _missing("sending a Vertex job", "google-auth") from None
    return error


def ml_v1_schemas() -> dict[str, Any]:
    """The `schemas` of the ml v1 (AI Platform) discovery document of google-api-python-client."""
    return _discovery_schemas("ml.v1", "checking an AI Platform trainingInput")


def aiplatform_v1_schemas() -> dict[str, Any]:
    """The `schemas` of the aiplatform v1 (Vertex) discovery document: enums the SDK also has."""
    return _discovery_schemas("aiplatform.v1", "checking a Vertex job's scheduling")


@cache
def _discovery_schemas(name: str, what: str) -> dict[str, Any]:
    try:
        spec = importlib.util.find_spec("googleapiclient")
    except ImportError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise _missing(what, "google-api-python-client")
    path = os.path.join(
        spec.submodule_search_locations[0], "discovery_cache", "documents", f"{name}.json"
    )
    with open(path, encoding="utf-8") as f:
        schemas: dict[str, Any] = json.load(f)["schemas"]
    return schemas


def kubeflow_training() -> tuple[Any, Any]:
    """(`kubeflow.training.models`, `kubeflow.training.constants`) of the v1 training operator."""
    try:
        models = importlib.import_module("kubeflow.training.models")
        constants = importlib.import_module("kubeflow.training.constants")
    except ImportError:
        raise _missing("rendering a Kubeflow job", "kubeflow-training") from None
    return models, constants


def kubeflow_api_client() -> Any:
    """A `kubeflow.training` ApiClient: its (de)serializer is the models' own."""
    try:
        return importlib.import_module("kubeflow.training.api_client").ApiClient()
    except ImportError:
        raise _missing("rendering a Kubeflow job", "kubeflow-training") from None


def kubeflow_trainer() -> Any:
    """`kubeflow_trainer_api.models`: Kubeflow Trainer v2's TrainJob and its parts."""
    try:
        return importlib.import_module("kubeflow_trainer_api.models")
    except ImportError:
        raise _missing("a Kubeflow TrainJob (--trainjob)", "kubeflow") from None


def katib_models() -> Any:
    """`kubeflow_katib_api.models`: Katib's v1beta1 Experiment and its parts."""
    try:
        return importlib.import_module("kubeflow_katib_api.models")
    except ImportError:
        raise _missing("a Katib Experiment (kubeflow --study)", "kubeflow-katib-api") from None


def kubernetes_client() -> Any:
    """`kubernetes.client`."""
    try:
        return importlib.import_module("kubernetes.client")
    except ImportError:
        raise _missing("a Kubeflow job", "kubernetes") from None


def kubernetes_config() -> Any:
    """`kubernetes.config`, which reads the user's kubeconfig."""
    try:
        return importlib.import_module("kubernetes.config")
    except ImportError:
        raise _missing("sending a Kubeflow job", "kubernetes") from None


def connection_error() -> type[Exception]:
    """urllib3's HTTPError: the kubernetes client's connection errors are not OSError."""
    try:
        error: type[Exception] = importlib.import_module("urllib3.exceptions").HTTPError
    except ImportError:
        raise _missing("sending a Kubeflow job", "urllib3") from None
    return error


def build_frontend() -> tuple[Any, Any]:
    """(`build`, `pyproject_hooks`): the PyPA front end that builds --python-package's sdist."""
    try:
        return importlib.import_module("build"), importlib.import_module("pyproject_hooks")
    except ImportError:
        raise MissingExtraError("building --python-package", "submit", module="build") from None


def build_env() -> Any:
    """`build.env`: the isolated environment `python -m build` builds in by default."""
    return importlib.import_module("build.env")


def yaml_module() -> Any:
    """PyYAML."""
    try:
        return importlib.import_module("yaml")
    except ImportError:
        raise _missing("YAML job files", "pyyaml") from None
