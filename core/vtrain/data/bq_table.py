"""`bq://project.dataset.table`: the BigQuery table a split names, parsed and checked.

Vertex sets AIP_*_DATA_URI to such a name when a managed dataset lives in
BigQuery (AIP_DATA_FORMAT=bigquery). The table is read through the BigQuery
Storage Read API, whose resource name is ``projects/P/datasets/D/tables/T``.
"""

from __future__ import annotations

import re

from vtrain.errors import ConfigError
from vtrain.frozen import Frozen

SCHEME = "bq://"
BIGQUERY = "bigquery"
_FORM = "bq://PROJECT.DATASET.TABLE"
# A project id is 6-30 lowercase letters, digits and '-'; older projects may carry a
# domain ("example.com:project"), whose dots are why the name is split from the right.
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
PROJECT_ID = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*:)?[a-z][a-z0-9-]{{4,28}}[a-z0-9]")
_DATASET = re.compile(r"[A-Za-z0-9_]{1,1024}")
# Table names may hold letters and digits of any script, '_', '-' and spaces; no dots.
_TABLE = re.compile(r"\w[\w -]{0,1023}")


class Table(Frozen):
    """One BigQuery table."""

    __slots__ = ("project", "dataset", "table")
    project: str
    dataset: str
    table: str

    def __init__(self, project: str, dataset: str, table: str) -> None:
        self._init_from(locals())

    @property
    def path(self) -> str:
        """The Storage Read API's name of the table: ``projects/P/datasets/D/tables/T``."""
        return f"projects/{self.project}/datasets/{self.dataset}/tables/{self.table}"

    @property
    def uri(self) -> str:
        """The table as Vertex names it: ``bq://P.D.T``."""
        return f"{SCHEME}{self.project}.{self.dataset}.{self.table}"


def is_table(uri: object, data_format: str | None) -> bool:
    """True when a split is a BigQuery table: a bq:// URI, or AIP_DATA_FORMAT=bigquery."""
    return (
        isinstance(uri, str) and bool(uri) and (uri.startswith(SCHEME) or data_format == BIGQUERY)
    )


def parse_table(uri: object, where: str) -> Table:
    """The table `uri` names; a ConfigError naming `where` for anything else."""

    def bad(problem: str, value: object = uri) -> ConfigError:
        return ConfigError(
            problem,
            source=where,
            value=value,
            expected=f"{_FORM}, as Vertex writes it (bq://my-project.my_dataset.my_table)",
        )

    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        raise ConfigError(
            "not a BigQuery table",
            source=where,
            value=uri,
            expected=_FORM,
            hint="AIP_DATA_FORMAT=bigquery needs a bq:// table; for files, set "
            "AIP_DATA_FORMAT to jsonl, csv or tf-record (or unset it)",
        )
    parts = uri[len(SCHEME) :].rsplit(".", 2)
    if len(parts) != 3:
        raise bad("needs three dot-separated names")
    project, dataset, table = parts
    if not PROJECT_ID.fullmatch(project):
        raise bad(
            "not a project id (6-30 lowercase letters, digits or '-', starting with a letter)",
            project,
        )
    if not _DATASET.fullmatch(dataset):
        raise bad("not a dataset name (letters, digits and '_')", dataset)
    if not _TABLE.fullmatch(table):
        raise bad("not a table name (letters, digits, '_', '-' or spaces)", table)
    return Table(project, dataset, table)
