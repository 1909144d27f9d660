"""Input data: this replica's share of the dataset the platform names, streamed record by record.

`files()` expands a split's AIP_*_DATA_URI (a local, /gcs/ or gs:// pattern),
sorts it, and deals this replica its share; `records()` streams that share's
JSON Lines, CSV or TFRecord records without loading a file into memory, or
the rows of a ``bq://`` BigQuery table (`table_rows`, the ``bigquery`` extra).
Framework adapters build on `Share` and `read_share`. `stream()` reads the same
records epoch after epoch with a position (`Stream.state()`, `merge_states`)
that resumes exactly, with any number of readers.
"""

from vtrain.data.bigquery import table_rows
from vtrain.data.files import files
from vtrain.data.merge import merge_states
from vtrain.data.progress import Progress, progress
from vtrain.data.records import FORMATS, check_format, format_of, read_share, records
from vtrain.data.shares import Share
from vtrain.data.splits import SPLITS
from vtrain.data.stream import Stream, stream

__all__ = [
    "FORMATS",
    "SPLITS",
    "Progress",
    "Share",
    "Stream",
    "check_format",
    "files",
    "format_of",
    "merge_states",
    "progress",
    "read_share",
    "records",
    "stream",
    "table_rows",
]
