"""A booster and its round count through vtrain's CheckpointManager, so a restarted job resumes.

The leader commits (the checkpoint callback does, on its background write
queue); every trainer restores the newest committed round on start, so all
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
from types import MappingProxyType
from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.errors import CheckpointError
from vtrain.plugins.handle import Resumed

MODEL_FILE = "model.ubj"
WORLD_FILE = "world.json"
"""How many trainers made the commit: ``{"world_size": n}`` (none in a commit from before)."""


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


def describe(done: int, was: int | None, world_size: int) -> str:
    """The log line of a resume: which round, and how the split is dealt now."""
    if was is None:
        return (
            f"vtrain: resumed round {done}; the commit does not say how many workers made it; "
            f"the whole split is dealt among {world_size}"
        )
    line = f"vtrain: resumed round {done} from {was} workers on {world_size}; "
    if was == world_size:
        return line + "every round reads the whole split, dealt as before"
    return line + f"every round reads the whole split, dealt anew among {world_size}"


def booster_of(model: Any) -> Any:
    """The `xgboost.Booster` of a booster or of a scikit-learn estimator (XGBRegressor …)."""
    get = getattr(model, "get_booster", None)
    return get() if callable(get) else model


def booster_bytes(model: Any) -> bytes:
    """The booster's UBJSON bytes, which `xgb.Booster(model_file=...)` reads whatever the name."""
    raw: bytes = booster_of(model).save_raw(raw_format="ubj")
    return raw


def restore_booster(manager: CheckpointManager) -> Resumed:
    """The newest committed booster (`state`) and its rounds (`done`); ``Resumed()`` if none.

    `extra` holds ``world_size``, the trainers that made the commit, where it says.
    """
    import xgboost

    checkpoint = manager.restore()
    if checkpoint is None:
        return Resumed()
    with checkpoint:
        booster = xgboost.Booster(model_file=bytearray(checkpoint.files[MODEL_FILE]))
        world = checkpoint.files.get(WORLD_FILE)
        extra = {} if world is None else {"world_size": read_world(world, checkpoint.uri)}
    return Resumed(
        done=checkpoint.step, uri=checkpoint.uri, state=booster, extra=MappingProxyType(extra)
    )
