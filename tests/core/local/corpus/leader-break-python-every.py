# expect: leader
# Every replica saves the model into AIP_MODEL_DIR (the README's classic bug).
import os

with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
    f.write("weights")
