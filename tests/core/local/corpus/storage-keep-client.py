# expect: ready
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# Writes the model with the Cloud Storage client.
import os

from _corpus import chief

from vtrain.storage import split_gs_uri, storage_client

if chief:
    bucket, prefix = split_gs_uri(os.environ["AIP_MODEL_DIR"])
    blob = storage_client().bucket(bucket).blob(prefix.rstrip("/") + "/model.txt")
    blob.upload_from_string(b"weights")
