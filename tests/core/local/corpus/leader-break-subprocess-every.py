# expect: leader
# Every replica's subprocess writes the model.
import subprocess

subprocess.run(["sh", "-c", 'echo w > "$AIP_MODEL_DIR/model.txt"'], check=True)
