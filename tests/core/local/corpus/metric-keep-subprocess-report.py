# expect: ready
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The chief's evaluation runs in a subprocess, which reports the metric.
import subprocess
import sys

from _corpus import chief, save_model

if chief:
    subprocess.run(
        [sys.executable, "-c", "from vtrain.hypertune import report; report(0.9)"], check=True
    )
save_model()
