# expect: metric
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# A subprocess reports the metric under the name the evaluation script uses.
import subprocess

from _corpus import chief, save_model

if chief:
    line = '{"val_accuracy": "0.9", "global_step": "1", "timestamp": 1.0, "trial": ""}'
    subprocess.run(["sh", "-c", f"echo '{line}' >> \"$CLOUD_ML_HP_METRIC_FILE\""], check=True)
save_model()
