"""The three splits a managed dataset gives a job, and where each one's URI comes from.

Vertex sets AIP_TRAINING_DATA_URI, AIP_VALIDATION_DATA_URI and AIP_TEST_DATA_URI
to a wildcard over exported files (``gs://bucket/…/training-*.jsonl``), or to a
``bq://project.dataset.table`` name when AIP_DATA_FORMAT is ``bigquery`` (see
`vtrain.data.bq_table`: a table is read by stream, not by file).
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.context import DATA_FORMAT_VARIABLE, DATA_URI_VARIABLES, RunContext
from vtrain.errors import UsageError

SPLITS = DATA_URI_VARIABLES
"""Split name -> the variable that holds its URI."""
FORMAT_VARIABLE = DATA_FORMAT_VARIABLE


def check_split(split: object) -> str:
    """`split` if it names a split; else a UsageError listing the known ones."""
    if not isinstance(split, str) or split not in SPLITS:
        raise UsageError(
            "unknown data split", source="split", value=split, expected=" or ".join(SPLITS)
        )
    return split


def split_uri(
    split: str, environ: Mapping[str, str], uri: str | None = None
) -> tuple[str | None, str | None, str]:
    """(URI, AIP_DATA_FORMAT, where the URI came from) for `split`; the URI is None when unset."""
    variable = SPLITS[check_split(split)]
    context = RunContext.from_env(environ)
    where = "uri" if uri is not None else variable
    if uri is None:
        uri = getattr(context, f"{split}_data_uri")
    elif not isinstance(uri, str) or not uri:
        raise UsageError(
            "not a file pattern",
            source="uri",
            value=uri,
            expected="a path, a /gcs/ path or a gs:// URI, wildcards allowed",
        )
    return uri, context.data_format, where
