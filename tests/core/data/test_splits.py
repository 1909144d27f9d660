"""Where a split's URI comes from."""

from __future__ import annotations

import pytest

from vtrain import ConfigError, UsageError
from vtrain.data.splits import split_uri


def test_each_split_reads_its_variable() -> None:
    env = {
        "AIP_TRAINING_DATA_URI": "a",
        "AIP_VALIDATION_DATA_URI": "b",
        "AIP_TEST_DATA_URI": "c",
        "AIP_DATA_FORMAT": "csv",
    }
    assert split_uri("training", env) == ("a", "csv", "AIP_TRAINING_DATA_URI")
    assert split_uri("validation", env)[0] == "b" and split_uri("test", env)[0] == "c"
    assert split_uri("test", env, "mine-*") == ("mine-*", "csv", "uri")
    assert split_uri("test", {}) == (None, None, "AIP_TEST_DATA_URI")


@pytest.mark.parametrize(
    "env",
    [
        {"AIP_TRAINING_DATA_URI": "bq://p.d.t"},
        {"AIP_TRAINING_DATA_URI": "bq://p.d.t", "AIP_DATA_FORMAT": "bigquery"},
    ],
)
def test_a_bigquery_split_is_returned_as_named(env: dict[str, str]) -> None:
    # files() refuses it and records() reads it as a table (see test_bigquery.py).
    assert split_uri("training", env)[0] == "bq://p.d.t"


def test_bad_arguments() -> None:
    with pytest.raises(
        UsageError,
        match=r"split: unknown data split \(got 'train'\); expected "
        r"training or validation or test",
    ):
        split_uri("train", {})
    with pytest.raises(UsageError, match=r"uri: not a file pattern \(got ''\)"):
        split_uri("training", {}, "")
    with pytest.raises(ConfigError, match=r"AIP_DATA_FORMAT: unknown data format \(got 'xml'\)"):
        split_uri("training", {"AIP_DATA_FORMAT": "xml"})
