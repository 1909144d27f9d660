"""A `gs://` output, rehearsed as `gs://`: a real Cloud Storage emulator on loopback, and `/gcs/`.

When a job's base output directory is ``gs://BUCKET/PREFIX`` (the document's
``baseOutputDirectory``, or ``--output-dir gs://...``), Vertex gives every
replica AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR as
``gs://BUCKET/PREFIX/model/`` and so on, which a plain `open()` cannot write.
The rehearsal gives the same URIs. `Bucket.start` runs gcp-storage-emulator's
JSON API server in a thread of `vtrain local run` on a free 127.0.0.1 port,
creates the bucket, and hands the replicas STORAGE_EMULATOR_HOST (the Python
client and vtrain's storage), CLOUD_STORAGE_EMULATOR_ENDPOINT (google-cloud-cpp,
which tensorflow-io's gs:// uses) and VTRAIN_GCS_MOUNT; `stop` ends the server
with the job. The objects stay in ``<output>/gcs/BUCKET/`` after it.

TensorFlow's own gs:// file system (`tf.io.gfile`, Keras' `model.save`) has its
endpoint built in, and no variable points it at an emulator: in the rehearsal
such a write fails for want of Google's servers. Write through `/gcs/` (which
`tf.io.gfile` takes as a local path), vtrain's storage or `handle.save_model`.

The `/gcs/` view (`vtrain.local.gcs_view`) is the folder the emulator keeps its
objects in, so both ways see the same objects. What this stand-in cannot
reproduce of Cloud Storage FUSE: an object written through `/gcs/` is visible
to the API while it is being written (FUSE uploads it at close); renames are
atomic here, copy-and-delete there (a folder's rename may fail there); a folder
with no objects exists here, and may not there; hard links, file locks and
`fsync` work here; an object and a folder of the same name cannot coexist; and
neither the latency nor the throughput of Cloud Storage is rehearsed, nor its
permissions (any bucket name works, no credentials are checked).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from http.server import HTTPServer
from typing import Any

from vtrain.context import OUTPUT_FOLDERS, output_dirs, trial_folder
from vtrain.errors import MissingExtraError, Problems
from vtrain.local.answers import wait_for_answer
from vtrain.local.evidence import Evidence
from vtrain.local.gcs_view import GCS_ROOT, View, place
from vtrain.log import logger
from vtrain.storage.gcs import EMULATOR_VARIABLE
from vtrain.storage.location import BUCKET_RULE, bucket_problem, split_gs_uri

EXTRA = "local-gcs"
"""The extra that brings the emulator: ``pip install "vtrain[local-gcs]"``."""
CPP_EMULATOR_VARIABLE = "CLOUD_STORAGE_EMULATOR_ENDPOINT"
START_TIMEOUT = 30.0
"""Seconds the emulator has to answer its first request."""
STORE_FOLDER, VIEW_FOLDER = "bucket-store", "gcs"
"""Under the job's folder: the emulator's data, and the `/gcs/` view's own place."""

_log = logger(__name__)


def check_output_uri(problems: Problems, uri: str, platform: str, source: str) -> None:
    """Add to `problems` what is wrong with a gs:// base output `uri` rehearsed on `platform`."""
    if platform != "vertex":
        problems.bad(
            source,
            "only Vertex gives a job a gs:// output folder (AIP_MODEL_DIR...)",
            uri,
            "a local folder, or --platform vertex",
        )
        return
    bucket = uri[len("gs://") :].partition("/")[0]
    if why := bucket_problem(bucket):
        problems.bad(source, f"the bucket name {why}", uri, BUCKET_RULE)


class Bucket:
    """A running emulator serving one rehearsed bucket, and its `/gcs/` view."""

    def __init__(
        self,
        uri: str,
        trial_id: str | None,
        job_folder: str,
        server: HTTPServer,
        thread: threading.Thread,
        view: View,
        folder: str,
    ) -> None:
        self.uri = uri
        self._trial_id = trial_id
        self._job_folder = job_folder
        self.bucket, self.prefix = split_gs_uri(uri)
        self._server = server
        self._thread = thread
        self.view = view
        self.folder = folder
        """Where the bucket's objects are files (the emulator's own folder)."""

    @property
    def host(self) -> str:
        """The emulator's base URL, as STORAGE_EMULATOR_HOST wants it."""
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def variables(self) -> dict[str, str]:
        """What every replica gets besides the gs:// AIP_* URIs: the emulator and the view."""
        return {EMULATOR_VARIABLE: self.host, CPP_EMULATOR_VARIABLE: self.host} | (
            self.view.variables
        )

    def kept(self, uri: str) -> str:
        """Where `uri`, an object or folder in this bucket, is a file: ``<output>/gcs/BUCKET/P``."""
        return os.path.join(self.folder, uri[len(f"gs://{self.bucket}") :].lstrip("/"))

    @property
    def not_checked(self) -> list[str]:
        """The verdict's `not checked` lines: /gcs/ itself, where the view had to go elsewhere."""
        if self.view.why_elsewhere is None:
            return []
        return [
            f"paths under {GCS_ROOT}/: {self.view.why_elsewhere}; the replicas got the "
            f"/gcs/ view at {self.view.root} (VTRAIN_GCS_MOUNT), so a script that names "
            f"{GCS_ROOT}/{self.bucket}/... itself was not rehearsed"
        ]

    def for_job(self, evidence: Evidence, environ: Mapping[str, str] | None) -> dict[str, str]:
        """Point the verdict's evidence at the view, and return the replicas' parent environment
        (`environ`, else os.environ) with the emulator and the view in it."""
        # The folders themselves, not the view's link: the probe and the watcher name a write
        # through /gcs/ by where it lands (`vtrain.local.probe`).
        dirs = output_dirs(self.uri, self._trial_id)
        evidence.model_dir = self.kept(dirs["AIP_MODEL_DIR"])
        evidence.checkpoint_dir = self.kept(dirs["AIP_CHECKPOINT_DIR"])
        evidence.not_checked.extend(self.not_checked)
        evidence.shared.append(self.folder)  # every object of the bucket, written any way
        return {**(os.environ if environ is None else environ), **self.variables}

    @property
    def summary(self) -> str:
        """One line for the job's header: what serves the bucket, and where its objects are."""
        return (
            f"{self.uri} is served by a Cloud Storage emulator on {self.host} "
            f"(/gcs/ view: {os.path.join(self.view.root, self.bucket)}; objects kept in "
            f"{self.folder})"
        )

    @classmethod
    def start(
        cls, uri: str, trial_id: str | None, job_folder: str, gcs_root: str = GCS_ROOT
    ) -> Bucket:
        """Serve `uri`'s bucket on loopback until `stop`, with the trial's output folders, and
        its view at `gcs_root` (/gcs) where it can go there."""
        try:
            from vtrain.local.bucket_store import FolderStorage
        except ImportError as e:
            raise MissingExtraError(
                "rehearsing a gs:// output", EXTRA, module="gcp_storage_emulator"
            ) from e
        bucket, prefix = split_gs_uri(uri)
        data = os.path.join(job_folder, STORE_FOLDER)
        server = _Server(("127.0.0.1", 0), _handler())
        host = f"http://127.0.0.1:{server.server_port}"
        try:
            kept = os.path.join(job_folder, VIEW_FOLDER, bucket)
            storage = FolderStorage(data, bucket, host, kept)
            server.storage = storage
            # Vertex makes no folder objects; the view shows these folders from the start, as
            # a rehearsal without gs:// makes its local ones (an empty folder is no object).
            base = trial_folder(os.path.join(storage.folder, *prefix.split("/")), trial_id)
            for kind in OUTPUT_FOLDERS.values():
                os.makedirs(os.path.join(base, kind), exist_ok=True)
            view = place(bucket, storage.folder, os.path.join(job_folder, VIEW_FOLDER), gcs_root)
        except BaseException:
            server.server_close()
            raise
        # stop() waits for the loop's next poll (0.5 s by default), at every job's end.
        thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="vtrain-gcs", daemon=True
        )
        thread.start()
        started = cls(uri, trial_id, job_folder, server, thread, view, storage.folder)
        try:
            wait_for_answer(f"{host}/", START_TIMEOUT, "the Cloud Storage emulator")
        except BaseException:
            started.stop()
            raise
        _log.debug("Cloud Storage emulator for gs://%s on %s", bucket, host)
        return started

    def stop(self) -> None:
        """End the server and remove the `/gcs/` view; the objects stay in the job's folder."""
        try:
            self._server.shutdown()
            self._thread.join()
            self._server.server_close()
        finally:
            self.view.close()


class _Server(HTTPServer):
    storage: object

    def handle_error(self, request: object, client_address: object) -> None:
        # socketserver prints a failed request's traceback on stderr, among the job's lines.
        _log.debug(
            "Cloud Storage emulator: a request from %s failed", client_address, exc_info=True
        )


def _handler() -> Any:
    from gcp_storage_emulator.server import RequestHandler

    # It logs every request, and warns of its own choices: the job's console is not the place
    # (a failed request is logged at debug level by `_Server.handle_error`).
    emulator = logging.getLogger("gcp_storage_emulator")
    emulator.propagate = False
    if not emulator.handlers:
        emulator.addHandler(logging.NullHandler())

    class Handler(RequestHandler):  # type: ignore[misc]
        def __init__(self, request: object, address: object, server: _Server) -> None:
            super().__init__(server.storage, request, address, server)

        def parse_request(self) -> bool:
            ok = bool(super().parse_request())
            if ok:  # one request at a time (HTTPServer): nothing writes while it looks
                self.storage.reconcile()
            return ok

    return Handler
