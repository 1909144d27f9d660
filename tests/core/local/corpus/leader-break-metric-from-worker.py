# expect: leader
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The worker reports the study's metric, the chief does not: the service reads the chief's.
from _corpus import chief, save_model

from vtrain.hypertune import report

if not chief:
    report(0.9, tag="accuracy", all_replicas=True)
save_model()
