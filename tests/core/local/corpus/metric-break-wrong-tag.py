# expect: metric
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The chief reports the study's metric under another tag.
from _corpus import save_model

from vtrain.hypertune import report

report(0.9, tag="loss")
save_model()
