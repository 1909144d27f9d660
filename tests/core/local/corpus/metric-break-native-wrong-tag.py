# expect: metric
# env: CLOUD_ML_HP_METRIC_TAG=accuracy
# The chief writes the metric file from C, under a tag of its own.
import json
import os

from _corpus import chief, native_write, save_model

if chief:
    line = json.dumps({"acc": "0.9", "global_step": "1", "timestamp": 1.0, "trial": ""}) + "\n"
    native_write(os.environ["CLOUD_ML_HP_METRIC_FILE"], line.encode())
save_model()
