"""One vocabulary: the four built-in handles speak the core Handle's words, with its meaning.

Read from the classes, with no framework installed: a plugin that re-implements a
common word, renames it, or brings back an old dialect's word fails here.
"""

from __future__ import annotations

import importlib
import inspect
import typing

import pytest

from vtrain import plugins
from vtrain.plugins import wait
from vtrain.plugins.handle import Handle, Resumed

BUILT_IN = ("pytorch", "tensorflow", "mxnet", "xgboost")

# Words whose meaning lives in the core: a plugin changes what they act on through the
# hooks (write_model, model_name, checkpoint_subfolder), never by redefining them.
INHERITED = (
    "role",
    "context",
    "share",
    "shard",
    "checkpoints",
    "checkpoint_manager",
    "save_model",
    "report",
    "__enter__",
)
# Words every framework must give its own meaning to.
IMPLEMENTED = ("resume", "write_model", "barrier", "close")
# The dialects the common words replaced: the same ideas under other names.
RETIRED = (
    "num_workers",
    "worker_rank",
    "part_index",
    "num_parts",
    "files",
    "in_world",
    "in_collective",
    "save_checkpoint_manager",
)


def handle_class(name: str) -> type[Handle]:
    plugin = plugins.get(name, {})
    hints = typing.get_type_hints(type(plugin).configure)
    found = hints["return"]
    assert isinstance(found, type) and issubclass(found, Handle), found
    return found


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_common_words_are_the_cores(name: str) -> None:
    handle = handle_class(name)
    for word in INHERITED:
        assert inspect.getattr_static(handle, word) is inspect.getattr_static(Handle, word), (
            f"{handle.__name__}.{word} redefines a common word"
        )
    for word in IMPLEMENTED:
        assert word in vars(handle) or any(
            word in vars(base) for base in handle.__mro__[1:] if base is not Handle
        ), f"{handle.__name__} does not implement {word}"
    assert typing.get_type_hints(handle.resume)["return"] is Resumed
    assert not [w for w in RETIRED if hasattr(handle, w)], f"{handle.__name__} keeps a dialect"


@pytest.mark.parametrize("name", BUILT_IN)
def test_rank_and_world_size_are_properties_with_the_cores_types(name: str) -> None:
    handle = handle_class(name)
    for word, expected in (("rank", int | None), ("world_size", int)):
        prop = inspect.getattr_static(handle, word)
        assert isinstance(prop, property), f"{handle.__name__}.{word}"
        assert typing.get_type_hints(prop.fget)["return"] == expected, f"{handle.__name__}.{word}"


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_plugin_waits_as_long_as_the_core_says(name: str) -> None:
    module = importlib.import_module(type(plugins.get(name, {})).__module__)
    assert getattr(module, "DEFAULT_WAIT", wait.DEFAULT_WAIT) is wait.DEFAULT_WAIT
    defaults = inspect.signature(type(plugins.get(name, {})).configure).parameters
    if "wait" in defaults:
        assert defaults["wait"].default is wait.DEFAULT_WAIT


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_plugin_declares_what_the_core_reads(name: str) -> None:
    plugin = plugins.get(name, {})
    assert plugin.kubeflow is not None and plugin.extra == name
    assert set(plugin.serving_roles) <= {"chief", "worker", "ps", "evaluator"}
