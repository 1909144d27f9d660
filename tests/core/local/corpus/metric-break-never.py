# expect: metric
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# A trial of a study that never reports its metric.
from _corpus import save_model

save_model()
