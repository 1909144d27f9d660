# expect: storage leader
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# Makes the "folder" first (which, on a plain disk, makes a folder named gs:), then opens;
# the failure is caught, logged, and the job ends without a model.
import os

from _corpus import chief

if chief:
    try:
        os.makedirs(os.environ["AIP_MODEL_DIR"], exist_ok=True)
        with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
            f.write("weights")
    except OSError as e:
        print(f"could not save the model: {e}", flush=True)
