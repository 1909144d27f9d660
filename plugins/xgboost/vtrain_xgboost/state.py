"""A booster and its round count through vtrain's CheckpointManager, so a restarted job resumes.

The leader commits (the checkpoint callback does, on its background writer);
every trainer restores the newest committed round on start, so all ranks
resume from the same model. A commit is there whole or not
at all: a replica killed mid-save resumes from the round before.
"""

from __future__ import annotations

from typing import Any

from vtrain.checkpoints import CheckpointManager

MODEL_FILE = "model.ubj"


def booster_of(model: Any) -> Any:
    """The `xgboost.Booster` of a booster or of a scikit-learn estimator (XGBRegressor …)."""
    get = getattr(model, "get_booster", None)
    return get() if callable(get) else model


def restore_booster(manager: CheckpointManager) -> tuple[Any, int]:
    """The newest committed booster and its rounds, or (None, 0) when nothing is committed."""
    import xgboost

    checkpoint = manager.restore()
    if checkpoint is None:
        return None, 0
    with checkpoint:
        booster = xgboost.Booster(model_file=bytearray(checkpoint.files[MODEL_FILE]))
    return booster, checkpoint.step
