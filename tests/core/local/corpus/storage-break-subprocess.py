# expect: storage leader
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# A shell redirect to a gs:// URI; its failure is only logged.
import subprocess

from _corpus import chief

if chief:
    subprocess.run(["sh", "-c", 'echo w > "$AIP_MODEL_DIR/model.txt"'])
