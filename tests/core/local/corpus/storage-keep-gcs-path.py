# expect: ready
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# Writes the model through the /gcs/ view of the bucket (Cloud Storage FUSE on Vertex).
import os

from _corpus import chief

from vtrain.storage import gcs_mount_root, split_gs_uri

if chief:
    bucket, prefix = split_gs_uri(os.environ["AIP_MODEL_DIR"])
    folder = os.path.join(gcs_mount_root(), bucket, prefix)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.txt"), "w") as f:
        f.write("weights")
