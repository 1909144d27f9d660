"""A booster and its round count through vtrain's CheckpointManager, so a restarted job resumes.

The leader commits (the checkpoint callback does, on its background write
queue); every trainer restores the newest committed round on start, so all
ranks resume from the same model. A commit is there whole or not at all: a
replica killed mid-save resumes from the round before.
"""

from __future__ import annotations

from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.plugins.handle import Resumed

MODEL_FILE = "model.ubj"


def booster_of(model: Any) -> Any:
    """The `xgboost.Booster` of a booster or of a scikit-learn estimator (XGBRegressor …)."""
    get = getattr(model, "get_booster", None)
    return get() if callable(get) else model


def booster_bytes(model: Any) -> bytes:
    """The booster's UBJSON bytes, which `xgb.Booster(model_file=...)` reads whatever the name."""
    raw: bytes = booster_of(model).save_raw(raw_format="ubj")
    return raw


def restore_booster(manager: CheckpointManager) -> Resumed:
    """The newest committed booster (`state`) and its rounds (`done`); ``Resumed()`` if none."""
    import xgboost

    checkpoint = manager.restore()
    if checkpoint is None:
        return Resumed()
    with checkpoint:
        booster = xgboost.Booster(model_file=bytearray(checkpoint.files[MODEL_FILE]))
    return Resumed(done=checkpoint.step, uri=checkpoint.uri, state=booster)
