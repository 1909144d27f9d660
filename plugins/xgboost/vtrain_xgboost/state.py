"""A booster and its round count through vtrain's CheckpointManager, so a restarted job resumes.

The leader commits (`handle.save_checkpoint`, which the checkpoint callback
calls, in the background); every trainer restores the newest committed round on start, so all
ranks resume from the same model. A commit is there whole or not at all: a
replica killed mid-save resumes from the round before.

Boosting has no data position to save: every trainer reads its whole share
into its matrix before the first round, and every round sees all of it. So a
commit records only how many trainers made it (`WORLD_FILE`); a resume with
another number deals the whole split anew among the trainers there are, and
the booster goes on from the committed round.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from vtrain.checkpoints import Checkpoint
from vtrain.data.saved_position import POSITION_FILE
from vtrain.errors import CheckpointError, UsageError
from vtrain.plugins.handle import Resumed

MODEL_FILE = "model.ubj"
WORLD_FILE = "world.json"
"""How many trainers made the commit: ``{"world_size": n}`` (none in a commit from before)."""
EXTRA_FILE = "extra.json"
"""What `save_checkpoint(..., **extra)` saved beside the booster (JSON); absent when nothing."""


def world_bytes(world_size: int) -> bytes:
    """The `WORLD_FILE` of a commit made by `world_size` trainers."""
    return json.dumps({"world_size": world_size}).encode()


def read_world(raw: bytes | memoryview, uri: str) -> int:
    """The trainer count a commit's `WORLD_FILE` holds."""
    try:
        found = json.loads(bytes(raw))
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(
            f"{WORLD_FILE} is not JSON ({e})",
            source=uri,
            expected='{"world_size": n}, as the checkpoint callback writes it',
        ) from e
    size = found.get("world_size") if isinstance(found, dict) else None
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise CheckpointError(
            f"{WORLD_FILE} holds no trainer count",
            source=uri,
            value=found,
            expected='{"world_size": n}, n >= 1',
        )
    return size


def booster_of(model: Any) -> Any:
    """The `xgboost.Booster` of a booster or of a scikit-learn estimator (XGBRegressor …)."""
    get = getattr(model, "get_booster", None)
    return get() if callable(get) else model


def booster_bytes(model: Any) -> bytes:
    """The booster's UBJSON bytes, which `xgb.Booster(model_file=...)` reads whatever the name."""
    raw: bytes = booster_of(model).save_raw(raw_format="ubj")
    return raw


def state_files(
    model: Any, world_size: int, extra: Mapping[str, Any], position: str | None
) -> dict[str, bytes]:
    """A commit's files: the booster, the trainer count, `extra` (JSON) and the data position."""
    files = {MODEL_FILE: booster_bytes(model), WORLD_FILE: world_bytes(world_size)}
    if extra:
        try:
            files[EXTRA_FILE] = json.dumps(dict(extra)).encode()
        except (TypeError, ValueError) as e:
            raise UsageError(
                f"cannot be saved as JSON ({e})",
                source="save_checkpoint(**extra)",
                value=sorted(extra),
                expected="numbers, strings, lists and dicts of them",
            ) from e
    if position is not None:
        files[POSITION_FILE] = position.encode()
    return files


def read_state(checkpoint: Checkpoint) -> Resumed:
    """The booster of a restored commit (`state`), its rounds (`done`) and what was beside it.

    `extra` holds ``world_size``, the trainers that made the commit, where it says.
    """
    import xgboost

    files = checkpoint.files
    booster = xgboost.Booster(model_file=bytearray(files[MODEL_FILE]))
    extra: dict[str, Any] = {}
    if EXTRA_FILE in files:
        extra.update(json.loads(bytes(files[EXTRA_FILE])))
    world = files.get(WORLD_FILE)
    if world is not None:
        extra["world_size"] = read_world(world, checkpoint.uri)
    data = None
    if POSITION_FILE in files:
        data = json.loads(bytes(files[POSITION_FILE]))
    return Resumed(
        done=checkpoint.step,
        uri=checkpoint.uri,
        state=booster,
        extra=MappingProxyType(extra),
        data=data,
    )
