# expect: ready
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The chief reports the study's metric under its tag, at each of its steps.
from _corpus import save_model

from vtrain.hypertune import report

for step in (1, 2, 3):
    report(0.5 + step / 10, tag="accuracy", step=step)
save_model()
