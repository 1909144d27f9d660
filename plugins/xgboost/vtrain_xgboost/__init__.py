"""vtrain's XGBoost plugin: `vtrain.plugins.get("xgboost").configure()`.

The chief hosts XGBoost's tracker on its own port from the cluster, ranks follow
the platform's, and every trainer enters the collective patiently. Importing
this package imports no XGBoost; it loads when `configure` runs.
"""

from vtrain_xgboost.handle import MODEL_NAME, XGBoostHandle
from vtrain_xgboost.plugin import XGBoostPlugin
from vtrain_xgboost.rendezvous import Rendezvous, task_id
from vtrain_xgboost.rows import row_block

__all__ = [
    "MODEL_NAME",
    "Rendezvous",
    "XGBoostHandle",
    "XGBoostPlugin",
    "row_block",
    "task_id",
]
