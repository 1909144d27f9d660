"""The TensorBoard backend: a run's metrics as event files in AIP_TENSORBOARD_LOG_DIR.

Vertex AI streams that folder into Vertex AI TensorBoard; `tensorboard --logdir`
reads it anywhere. The events are written here, without TensorFlow or the
tensorboard package: an `Event` protocol buffer (wall_time, step, a `Summary` of
`simple_value`s) is a dozen bytes of fields, framed as TFRecord (the masked
CRC32C of `vtrain.data.masked_crc`).

Each attempt of the run writes a file of its own. A resumed attempt begins with a
`SessionLog` START at its first step: TensorBoard then drops what earlier attempts
logged at that step and after (its own rule for a restarted job), and shows each
step once, as `vtrain.track.records.merged` does.
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct
import time
from typing import Any

from vtrain.storage import Location
from vtrain.track.jsonl import JsonLinesSink
from vtrain.track.records import METRIC, RESUME, START

_FILE_VERSION = b"brain.Event:2"
_FLOAT32_MOST = 3.4028234663852886e38
_SESSION_START = 1


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 is ten bytes, as protobuf writes it
    out = bytearray()
    while True:
        bits, value = value & 0x7F, value >> 7
        out.append(bits | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _float32(value: float) -> float:
    """`value` as a `simple_value` holds it: past float32's range, an infinity of its sign."""
    if math.isfinite(value) and abs(value) > _FLOAT32_MOST:
        return math.copysign(math.inf, value)
    return value


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (a string or a message)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def event(wall_time: float, step: int, **what: Any) -> bytes:
    """An `Event`: with `scalars` ({tag: value}), `file_version`, or `session_start`."""
    data = b"\x09" + struct.pack("<d", wall_time) + b"\x10" + _varint(step)
    if "file_version" in what:
        data += _field(3, what["file_version"])
    if "scalars" in what:
        values = b"".join(
            _field(1, _field(1, tag.encode()) + b"\x15" + struct.pack("<f", _float32(value)))
            for tag, value in what["scalars"].items()
        )
        data += _field(5, values)
    if what.get("session_start"):
        data += _field(7, b"\x08" + _varint(_SESSION_START))
    return data


def frame(data: bytes) -> bytes:
    """One TFRecord: its length, the length's masked CRC32C, the data, the data's."""
    from vtrain.data.masked_crc import mask
    from vtrain.storage.crc32c import crc32c

    length = struct.pack("<Q", len(data))
    return (
        length
        + struct.pack("<I", mask(crc32c(length)))
        + data
        + struct.pack("<I", mask(crc32c(data)))
    )


def events(lines: list[bytes]) -> list[bytes]:
    """The framed events for a hand-over of the run's JSON lines (metrics, resumes)."""
    found = []
    for raw in lines:
        record = json.loads(raw)
        kind = record["kind"]
        if kind == METRIC:
            scalars = {record["name"]: float(record["value"])}
            found.append(frame(event(record["t"], record["step"], scalars=scalars)))
        elif kind == RESUME:
            found.append(frame(event(record["t"], record["step"] + 1, session_start=True)))
        elif kind == START:
            found.append(frame(event(record["t"], 0, file_version=_FILE_VERSION)))
    return found


class TensorBoardSink:
    """Writes one attempt's events into the TensorBoard folder `folder`."""

    def __init__(self, folder: Location, attempt: int) -> None:
        self._folder = folder
        # TensorBoard reads a folder's event files in the order of their names: the time,
        # then the attempt, so that a resume's START comes after what it drops.
        self._name = (
            f"events.out.tfevents.{int(time.time()):010d}.vtrain-attempt-{attempt:06d}."
            f"{socket.gethostname()}.{os.getpid()}"
        )
        self._out = JsonLinesSink(folder, self._name)  # appends any records: framed events too

    def __call__(self, lines: list[bytes]) -> None:
        framed = events(lines)
        if framed:
            self._out(framed)
