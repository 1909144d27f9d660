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
# hooks (write_model, _write_state, _read_state, _release, _batches, model_name …), never
# by redefining them.
INHERITED = (
    "role",
    "context",
    "distributed",
    "share",
    "shard",
    "stream",
    "batches",
    "checkpoints",
    "checkpoint_manager",
    "save_checkpoint",
    "resume",
    "preempted",
    "save_model",
    "report",
    "step",
    "long",
    "progress",
    "track",
    "close",
    "__enter__",
    "__exit__",
)
# Words every framework must give its own meaning to.
IMPLEMENTED = ("write_model", "barrier")
# Hooks of which a framework implements one: resume reads a committed step, or reads its own.
ONE_OF = (("_read_state", "_resume"),)
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
    "stream_batches",
    "stream_iter",
    "stream_dataset",
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
        assert _implements(handle, word), f"{handle.__name__} does not implement {word}"
    for words in ONE_OF:
        assert any(_implements(handle, w) for w in words), f"{handle.__name__}: none of {words}"
    assert typing.get_type_hints(handle.resume)["return"] is Resumed
    assert not [w for w in RETIRED if hasattr(handle, w)], f"{handle.__name__} keeps a dialect"


def _implements(handle: type[Handle], word: str) -> bool:
    return any(word in vars(base) for base in handle.__mro__ if base is not Handle)


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_save_and_its_end_have_one_shape(name: str) -> None:
    # save_checkpoint(step, *objects, blocking=, data=, **extra) and close(ok=True) on every
    # handle, as the core defines them; the framework part is a hook.
    handle = handle_class(name)
    save = inspect.signature(handle.save_checkpoint).parameters
    assert list(save) == ["self", "step", "objects", "blocking", "data", "extra"]
    assert save["objects"].kind is inspect.Parameter.VAR_POSITIONAL
    assert save["extra"].kind is inspect.Parameter.VAR_KEYWORD
    assert inspect.signature(handle.close).parameters["ok"].default is True
    assert typing.get_type_hints(handle.save_checkpoint)["return"] == str | None
    assert isinstance(inspect.getattr_static(handle, "preempted"), property)
    assert isinstance(inspect.getattr_static(handle, "distributed"), property)


@pytest.mark.parametrize("name", ("pytorch", "tensorflow", "mxnet", "xgboost"))
def test_every_framework_that_takes_batches_gives_them_from_a_stream(name: str) -> None:
    handle = handle_class(name)
    assert _implements(handle, "_batches"), f"{handle.__name__} has no batches"
    batch_size = inspect.signature(handle._batches).parameters["batch_size"]
    assert batch_size.kind is inspect.Parameter.KEYWORD_ONLY


def test_a_framework_without_batches_says_so() -> None:
    from vtrain.cluster import ClusterInfo
    from vtrain.errors import UsageError

    handle = Handle(info=ClusterInfo.from_env({}), is_leader=True, environ={})
    with pytest.raises(UsageError, match=r"^batches: Handle takes no batches from a stream"):
        handle.batches(object(), batch_size=8)  # type: ignore[arg-type]
    assert not handle.distributed and not handle.preempted
    handle.close()
    handle.close()  # safe twice


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
