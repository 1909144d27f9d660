"""`Cursor`: where a reader stands in one file, and which of the file's records it keeps.

Each format's reader (jsonl.py, csv_records.py, tfrecord.py) starts at the
cursor's byte offset and moves the cursor past every record it gives out, so a
stream's position costs nothing to take: it is its cursors as they stand.
"""

from __future__ import annotations


class Cursor:
    """A byte offset at a record boundary, the records before it, and the keep rule."""

    __slots__ = ("offset", "records", "skip", "step", "count")

    def __init__(
        self, offset: int = 0, records: int = 0, skip: int = 0, step: int = 1, count: int = 0
    ) -> None:
        self.offset = offset
        """Bytes of the file read: where its next record starts (a row offset in BigQuery)."""
        self.records = records
        """Records of the file before `offset`: lines of JSON Lines (blank ones too), rows of
        CSV after the header (not blank ones), records of TFRecord, rows of a BigQuery stream."""
        self.skip = skip
        """Records to pass over before the next one kept."""
        self.step = step
        """One record in every `step` is kept, from the first after `skip`."""
        self.count = count
        """Records given out so far."""
