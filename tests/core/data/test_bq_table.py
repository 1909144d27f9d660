"""`bq://PROJECT.DATASET.TABLE`: what parses, and the error for everything else."""

from __future__ import annotations

import re

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain import ConfigError
from vtrain.data.bq_table import Table, is_table, parse_table


@pytest.mark.parametrize(
    ("uri", "parts"),
    [
        ("bq://my-project.my_data.rows", ("my-project", "my_data", "rows")),
        ("bq://example.com:my-project.d.t", ("example.com:my-project", "d", "t")),
        ("bq://proj-123.Data_1.events-2024 copy", ("proj-123", "Data_1", "events-2024 copy")),
        ("bq://abcdef.d.données", ("abcdef", "d", "données")),
    ],
)
def test_valid_names(uri: str, parts: tuple[str, str, str]) -> None:
    table = parse_table(uri, "AIP_TRAINING_DATA_URI")
    assert table == Table(*parts)
    assert table.uri == uri
    assert table.path == "projects/{}/datasets/{}/tables/{}".format(*parts)


@pytest.mark.parametrize(
    ("uri", "match"),
    [
        ("gs://b/t.jsonl", r"not a BigQuery table \(got 'gs://b/t.jsonl'\).*AIP_DATA_FORMAT"),
        ("bq://my-project.rows", r"needs three dot-separated names"),
        ("bq://p.d.t", r"not a project id .*\(got 'p'\)"),
        ("bq://My-Project.d.t", r"not a project id"),
        ("bq://my-project-.d.t", r"not a project id"),
        ("bq://my-project.my-data.t", r"not a dataset name .*\(got 'my-data'\)"),
        ("bq://my-project.d.", r"not a table name"),
        ("bq://my-project.d.t/x", r"not a table name .*\(got 't/x'\)"),
        ("bq://my-project.d. t", r"not a table name"),
        (5, r"not a BigQuery table \(got 5\)"),
    ],
)
def test_malformed_names(uri: object, match: str) -> None:
    with pytest.raises(ConfigError, match=r"^AIP_TEST_DATA_URI: " + match):
        parse_table(uri, "AIP_TEST_DATA_URI")


def test_is_table() -> None:
    assert is_table("bq://a.b.c", None)
    assert is_table("anything", "bigquery")
    assert not is_table("gs://b/*.csv", "csv")
    assert not is_table(None, "bigquery") and not is_table("", "bigquery")


_NAME = re.compile(r"bq://[a-z0-9.:-]+\.[A-Za-z0-9_]+\.\w[\w -]*")


@examples(300)
@given(st.text(max_size=40))
def test_any_text_parses_back_or_fails_clearly(tail: str) -> None:
    uri = "bq://" + tail
    try:
        table = parse_table(uri, "uri")
    except ConfigError as e:
        assert str(e).startswith("uri: ")
        assert "expected bq://PROJECT.DATASET.TABLE" in str(e)
        return
    # Only well-formed names get through, and they name the table they came from.
    assert table.uri == uri and _NAME.fullmatch(uri)
    assert "/" not in table.table and "." not in table.dataset + table.table


@examples(300)
@given(
    st.sampled_from(["my-project", "example.com:my-project"]),
    st.sampled_from(["my_data", "d1"]),
    st.sampled_from(["rows", "t-2"]),
    st.integers(0, 2),
    st.sampled_from(list("./\\\n\x00@#?*%:") + ["..", "bq://"]),
    st.integers(0, 12),
)
def test_a_bad_character_anywhere_is_refused(
    project: str, dataset: str, table: str, part: int, bad: str, at: int
) -> None:
    parts = [project, dataset, table]
    text = parts[part]
    if part == 0 and bad in ".:" or bad == "." and part == 2:
        bad = "/"  # a dot or colon there makes a different, possibly valid, name
    parts[part] = text[: at % (len(text) + 1)] + bad + text[at % (len(text) + 1) :]
    with pytest.raises(ConfigError, match=r"^AIP_TRAINING_DATA_URI: (not a|needs three)"):
        parse_table("bq://" + ".".join(parts), "AIP_TRAINING_DATA_URI")
