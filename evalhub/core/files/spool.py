"""Records kept on disk while a file is read, for a reader that must read a whole file before it writes
(SQLite: the import's write lock is held only while writing) without a file of ten million rows in
memory: batches of records as JSON (msgspec) in a temporary file, read back in order. JSON, not
MessagePack: a metadata integer may have up to rows.MAX_INT_DIGITS digits, past MessagePack's 64 bits."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Generic, TypeVar

import msgspec

T = TypeVar("T")
BATCH = 10_000  # records encoded at a time
HEADER = 8  # bytes of each batch's length


class Spool(Generic[T]):
    """Add records of one type (a dataclass or msgspec Struct); iterate to read them back, once."""

    def __init__(self, kind: type[T]) -> None:
        self.file = tempfile.TemporaryFile(prefix="evalhub-spool-")
        self.encoder = msgspec.json.Encoder()
        self.decoder = msgspec.json.Decoder(list[kind])  # type: ignore[valid-type]
        self.batch: list[T] = []
        self.count = 0

    def add(self, record: T) -> None:
        self.batch.append(record)
        self.count += 1
        if len(self.batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.batch:
            payload = self.encoder.encode(self.batch)
            self.file.write(len(payload).to_bytes(HEADER, "little"))
            self.file.write(payload)
            self.batch.clear()

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[T]:
        self._flush()
        self.file.seek(0)
        while header := self.file.read(HEADER):
            yield from self.decoder.decode(self.file.read(int.from_bytes(header, "little")))

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Spool[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
