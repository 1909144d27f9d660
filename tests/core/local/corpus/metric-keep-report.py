# expect: ready
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The chief reports the study's metric; the tag comes from the study.
from _corpus import save_model

from vtrain.hypertune import report

report(0.9)
save_model()
