"""vtrain.data against TensorFlow: TFRecord byte for byte, and handle.dataset on a real cluster."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from cluster_run import local_run
from conftest import configure

from vtrain import StorageError, UsageError
from vtrain.data import Share, records

RNG = random.Random(17)
# Empty records, a 3 MiB one, bytes that look like framing, random lengths; a file of none.
FILES = [
    [b"", b"one", RNG.randbytes(3 << 20), b"", b"\x00" * 12],
    [],
    [RNG.randbytes(RNG.randrange(0, 5000)) for _ in range(40)],
    [b"\xff" * 7, b""],
]


def write_tfrecords(folder: Path, files: list[list[bytes]], stem: str = "training") -> list[str]:
    import tensorflow as tf

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i, rows in enumerate(files):
        names.append(str(folder / f"{stem}-{i:05d}.tfrecord"))
        with tf.io.TFRecordWriter(names[-1]) as writer:
            for row in rows:
                writer.write(row)
    return names


def tf_reads(names: list[str]) -> list[bytes]:
    import tensorflow as tf

    return [r.numpy() for r in tf.data.TFRecordDataset(names)]


def ours(pattern: str, rank: int = 0, world_size: int = 1, **kw: Any) -> list[bytes]:
    return list(records(uri=pattern, rank=rank, world_size=world_size, environ={}, **kw))


def test_tfrecord_records_are_tensorflows_byte_for_byte(tmp_path: Path) -> None:
    names = write_tfrecords(tmp_path, FILES)
    pattern = str(tmp_path / "training-*")
    every = tf_reads(names)
    assert every == [row for rows in FILES for row in rows]  # TF's writer, as written
    assert ours(pattern) == every
    assert ours(pattern, 1, 3, by_record=True) == every[1::3]
    handle = configure(VTRAIN_OUTPUT_DIR=str(tmp_path / "out"), AIP_TRAINING_DATA_URI=pattern)
    assert [r.numpy() for r in handle.dataset()] == every


def offset_of(rows: list[bytes], index: int) -> int:
    return sum(12 + len(row) + 4 for row in rows[:index])


ROWS = FILES[2]
DAMAGE = {
    "data": (offset_of(ROWS, 5) + 12 + 1, "a corrupt record .its data checksum"),
    "length": (offset_of(ROWS, 5) + 3, "a corrupt record length"),
    "cut": (None, "a torn record of"),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_file_fails_in_both_and_vtrain_names_file_and_offset(
    kind: str, tmp_path: Path
) -> None:
    import tensorflow as tf

    (name,) = write_tfrecords(tmp_path, [ROWS])
    data = bytearray(Path(name).read_bytes())
    at, problem = DAMAGE[kind]
    if at is None:
        del data[offset_of(ROWS, 5) + 20 :]
    else:
        data[at] ^= 0x40
    Path(name).write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        tf_reads([name])
    where = rf"{name}: {problem}.* at byte offset {offset_of(ROWS, 5)}\b"
    with pytest.raises(StorageError, match=where):
        ours(name)


@pytest.mark.timeout(240)
def test_gs_and_json_lines_come_through_the_generator(gcs_emulator: Any, tmp_path: Path) -> None:
    import tensorflow as tf

    local = write_tfrecords(tmp_path / "local", FILES)
    bucket = gcs_emulator.new_bucket()
    for name in local:
        blob = gcs_emulator.client().bucket(bucket).blob(f"d/{Path(name).name}")
        blob.upload_from_filename(name)
    rows = [{"id": i, "text": f"row {i}", "v": [0.5] * (i % 3)} for i in range(5)]
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    handle = configure(
        **gcs_emulator.environ,
        VTRAIN_GCS_MOUNT=str(tmp_path / "no-mount"),  # the client, not a FUSE mount
        VTRAIN_OUTPUT_DIR=str(tmp_path / "out"),
        AIP_TRAINING_DATA_URI=f"gs://{bucket}/d/training-*",
        AIP_VALIDATION_DATA_URI=str(tmp_path / "v.jsonl"),
    )
    assert [r.numpy() for r in handle.dataset()] == tf_reads(local)

    dataset = handle.dataset("validation")
    assert dataset.element_spec == {
        "id": tf.TensorSpec((), tf.int64),
        "text": tf.TensorSpec((), tf.string),
        "v": tf.TensorSpec((None,), tf.float32),
    }
    assert [r["id"].numpy() for r in dataset] == list(range(5))
    assert [r["v"].numpy().tolist() for r in dataset] == [r["v"] for r in rows]

    (tmp_path / "bad.jsonl").write_text('{"id": null}\n')
    with pytest.raises(UsageError, match=r"output_signature: cannot infer .*\['id'\]"):
        handle.dataset(uri=str(tmp_path / "bad.jsonl"))
    signature = {"id": tf.TensorSpec((), tf.string)}
    (tmp_path / "s.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
    given = handle.dataset(uri=str(tmp_path / "s.jsonl"), output_signature=signature)
    assert [r["id"].numpy() for r in given] == [b"a", b"b"]


@pytest.mark.parametrize("format", ["tf-record", "jsonl", None])
def test_a_replica_that_reads_nothing_gets_an_empty_dataset(format: str | None) -> None:
    import tensorflow as tf

    from vtrain_tensorflow.data import share_dataset

    empty = share_dataset(Share.empty("training"), format=format)
    assert empty.element_spec == tf.TensorSpec((), tf.string) and list(empty) == []
    signature = {"id": tf.TensorSpec((), tf.int64)}
    if format != "tf-record":
        shaped = share_dataset(Share.empty("training"), format=format, output_signature=signature)
        assert shaped.element_spec == signature and list(shaped) == []


# Each replica distributes its datasets as Keras' fit does, and prints every record it got.
SCRIPT = """
import json, vtrain
handle = vtrain.plugins.get("tensorflow").configure()
strategy = handle.strategy

def seen(dataset, field=None):
    got = []
    for batch in strategy.experimental_distribute_dataset(dataset.batch(2)):
        for part in strategy.experimental_local_results(batch):
            values = (part if field is None else part[field]).numpy().tolist()
            got += [v.decode() if isinstance(v, bytes) else v for v in values]
    return got

print("SEEN", json.dumps({
    "tfrecord": seen(handle.dataset()),
    "jsonl": seen(handle.dataset("validation"), "id"),
    "by_record": seen(handle.dataset("test", by_record=True)),
}), flush=True)
"""


@pytest.mark.timeout(360)
def test_two_replicas_read_disjoint_shares_that_tensorflow_does_not_shard_again(
    tmp_path: Path,
) -> None:
    # 5 TFRecord files (3 and 2 per replica), 4 JSON Lines files, and one TFRecord file
    # shared record by record: TensorFlow's own auto-sharding would drop some of each.
    data = tmp_path / "data"
    training = [[f"t{f}-{r}".encode() for r in range(3)] for f in range(5)]
    write_tfrecords(data, training)
    write_tfrecords(data, [[f"x{r}".encode() for r in range(7)]], stem="test")
    for f in range(4):
        lines = "".join(json.dumps({"id": f * 10 + r}) + "\n" for r in range(3))
        (data / f"validation-{f}.jsonl").write_text(lines)
    script = tmp_path / "read.py"
    script.write_text(SCRIPT)
    run = local_run(
        tmp_path / "out",
        ["--workers", "1"],
        [str(script)],
        AIP_TRAINING_DATA_URI=str(data / "training-*"),
        AIP_VALIDATION_DATA_URI=str(data / "validation-*"),
        AIP_TEST_DATA_URI=str(data / "test-*"),
    )
    assert run.returncode == 0, run.output
    chief, worker = (json.loads(run.last(r, "SEEN")) for r in ("chief-0", "worker-0"))
    expected = {
        "tfrecord": [r.decode() for rows in training for r in rows],
        "jsonl": [f * 10 + r for f in range(4) for r in range(3)],
        "by_record": [f"x{r}" for r in range(7)],
    }
    for kind, every in expected.items():
        assert chief[kind] and worker[kind], (kind, chief, worker)
        assert not set(chief[kind]) & set(worker[kind]), kind
        assert sorted(chief[kind] + worker[kind]) == sorted(every), kind
