"""What `CheckpointManager.save` accepts, sorted into one of three kinds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vtrain.checkpoints.manifest import BYTES_NAME
from vtrain.errors import CheckpointError, StorageError
from vtrain.storage.names import check_name

Writer = Callable[[str], object]
"""A callable that writes a checkpoint's files into the local folder it is given."""

PayloadLike = bytes | bytearray | memoryview | Mapping[str, Any] | Writer


@dataclass(frozen=True)
class Snapshot:
    """A writer over state nobody changes any more (tensors copied for the purpose, raw bytes).

    An asynchronous `save(step, Snapshot(writer), blocking=False)` runs it later,
    on the background thread; a plain callable runs before `save` returns,
    because it may read state the training loop goes on changing.
    """

    writer: Writer

    def __call__(self, folder: str) -> object:
        return self.writer(folder)


@dataclass(frozen=True)
class Payload:
    """A save's content: in-memory files (kinds bytes and files) or a folder's files."""

    kind: str
    files: Mapping[str, memoryview] = field(default_factory=dict)
    writer: Writer | None = None
    staged: str | None = None
    """A local folder the writer already filled (an asynchronous save's snapshot); the
    save moves or uploads its files and removes it."""

    @property
    def deferred(self) -> bool:
        """True when the writer may run later, in the background."""
        return isinstance(self.writer, Snapshot)


def _view(data: Any, where: str, name: str) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise CheckpointError(
            "file content is not bytes",
            source=where,
            path=name,
            value=type(data).__name__,
            expected="bytes, bytearray or memoryview",
        ) from None
    # A non-contiguous view (a strided NumPy slice) cannot be written without a copy.
    return view.cast("B") if view.contiguous else memoryview(view.tobytes())


def as_payload(payload: object, where: str) -> Payload:
    """Sort a `save` argument into a `Payload`; `CheckpointError` for anything else."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return Payload("bytes", {BYTES_NAME: _view(payload, where, BYTES_NAME)})
    if isinstance(payload, Mapping):
        files = {}
        for name, data in payload.items():
            try:
                check_name(name, where=where, what="file name")
            except StorageError as e:
                raise CheckpointError(
                    e.problem, source=where, value=name, expected=e.expected
                ) from None
            files[name] = _view(data, where, name)
        if not files:
            raise CheckpointError(
                "nothing to save", source=where, value={}, expected="at least one file"
            )
        return Payload("files", files)
    if callable(payload):
        return Payload("directory", writer=payload)
    raise CheckpointError(
        "cannot save this payload",
        source=where,
        value=type(payload).__name__,
        expected="bytes, a mapping of file names to bytes, or a callable that writes files "
        "into the folder it is given (e.g. lambda d: torch.save(state, f'{d}/model.pt'))",
    )
