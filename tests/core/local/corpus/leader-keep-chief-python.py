# expect: ready
# The README's fix: the chief alone saves the model.
import os

from vtrain import ClusterInfo

if ClusterInfo.from_env().is_chief:
    with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
        f.write("weights")
