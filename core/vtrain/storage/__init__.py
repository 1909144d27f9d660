"""Storage locations: a local folder, a Cloud Storage FUSE folder, or a gs:// prefix."""

from vtrain.storage.fuse import FuseLocation
from vtrain.storage.gcs import GcsLocation, storage_client
from vtrain.storage.local import LocalLocation
from vtrain.storage.location import (
    DEFAULT_GCS_MOUNT,
    GCS_MOUNT_VARIABLE,
    Location,
    gcs_mount_root,
    split_gs_uri,
)
from vtrain.storage.names import check_name
from vtrain.storage.opener import open_location

__all__ = [
    "DEFAULT_GCS_MOUNT",
    "GCS_MOUNT_VARIABLE",
    "FuseLocation",
    "GcsLocation",
    "LocalLocation",
    "Location",
    "check_name",
    "gcs_mount_root",
    "open_location",
    "split_gs_uri",
    "storage_client",
]
