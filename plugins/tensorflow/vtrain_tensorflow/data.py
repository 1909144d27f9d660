"""A tf.data.Dataset over one replica's share, marked so that TensorFlow does not shard it again.

vtrain.data has already given each replica its own files (or records), so the
dataset's AutoShardPolicy is OFF: MultiWorkerMirroredStrategy's
`experimental_distribute_dataset` (and so Keras' `fit`) would otherwise shard
each replica's share once more and train on a fraction of the data.

Local and /gcs/ TFRecord files are read by `tf.data.TFRecordDataset`, in C++.
JSON Lines, CSV and gs:// objects go through `vtrain.data.read_share` in a
`tf.data.Dataset.from_generator`: TensorFlow's own gs:// filesystem only talks
to storage.googleapis.com over HTTPS (no endpoint setting), so it would ignore
STORAGE_EMULATOR_HOST and the storage client vtrain was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.data import Share, check_format, format_of, read_share
from vtrain.errors import UsageError

TFRECORD = "tf-record"


def share_dataset(
    share: Share,
    *,
    format: str | None = None,
    output_signature: Any = None,
    environ: Mapping[str, str] | None = None,
    client: Any = None,
) -> Any:
    """A tf.data.Dataset of `share`'s records, with auto-sharding OFF.

    TFRecord records are scalar tf.string tensors. JSON Lines and CSV records
    follow `output_signature`, else one inferred from the share's first record.
    A share of no files gives an empty dataset (of `output_signature`, else of
    strings).
    """
    import tensorflow as tf

    kinds = _formats(share, format)
    if kinds == {TFRECORD} and not any(name.startswith("gs://") for name in share.files):
        dataset = tf.data.TFRecordDataset(list(share.files))
        if share.by_record:
            k, n = share.record_shard
            # TFRecordDataset reads its files one after another, as read_share does, so
            # element i here is record i of the share's stream.
            dataset = dataset.shard(n, k)
    else:
        if output_signature is None:
            # TFRecord records are bytes; a replica that reads nothing has no record to ask.
            bytes_only = kinds <= {TFRECORD} or not share.files
            output_signature = (
                tf.TensorSpec((), tf.string)
                if bytes_only
                else _infer(share, format, environ, client)
            )

        def generate() -> Any:
            return read_share(share, format=format, environ=environ, client=client)

        dataset = tf.data.Dataset.from_generator(generate, output_signature=output_signature)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return dataset.with_options(options)


def _formats(share: Share, format: str | None) -> set[str]:
    # Checked here, at the call, not by the first read inside TensorFlow's iterator.
    if format is not None:
        return {check_format(format)}
    if share.format is not None:
        return {check_format(share.format, "AIP_DATA_FORMAT")}
    return {format_of(name) for name in share.files}


def _infer(share: Share, format: str | None, environ: Mapping[str, str] | None, client: Any) -> Any:
    stream = read_share(share, format=format, environ=environ, client=client)
    try:
        first = next(stream, None)
    finally:
        stream.close()  # type: ignore[attr-defined]  # a generator: closes the file
    if first is None:
        raise UsageError(
            "cannot infer the records' types: the share has no record",
            source="output_signature",
            value=None,
            expected="a tf.TensorSpec, or a dict of them, for each record",
            hint=f"pass output_signature= (this replica reads {len(share.files)} empty file(s))",
        )
    return _spec(first, "the first record")


def _spec(value: Any, where: str) -> Any:
    """The TensorSpec of a record's value: every dimension left open, Python ints as int64."""
    import tensorflow as tf

    if isinstance(value, dict):
        return {str(key): _spec(item, f"{where}[{key!r}]") for key, item in value.items()}
    try:
        tensor = tf.constant(value)
    except (TypeError, ValueError):
        raise UsageError(
            f"cannot infer a tensor type from {where}",
            source="output_signature",
            value=value,
            expected="numbers, strings, booleans or lists of one such type, equally long",
            hint="pass output_signature= with a tf.TensorSpec for each field",
        ) from None
    dtype = tf.int64 if tensor.dtype == tf.int32 else tensor.dtype
    # Lists may differ in length from record to record: no dimension is fixed.
    return tf.TensorSpec([None] * tensor.shape.rank, dtype)
