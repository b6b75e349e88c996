"""A map from text keys to records, kept on disk while a file is read and imported: a benchmark file of
ten million prompts names each one by its id in the file, and a dict of them (the record, its key, the
entry) costs about a kilobyte a prompt. Here they live in a private temporary SQLite database (Python's
own `sqlite3`: nothing to install), looked up and written a batch at a time, as JSON (msgspec, as
`Spool` writes them); memory holds the database's page cache (CACHE_KIB), not the map."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from typing import Generic, TypeVar

import msgspec

T = TypeVar("T")
CACHE_KIB = 32 * 1024  # SQLite's page cache: the memory a map holds however large it grows
READ_BATCH = 10_000  # records decoded at a time when the map is read in order


def key_of(*parts: str) -> str:
    """One text key for several (a prompt id and a model slug), unambiguous whatever the parts hold."""
    return msgspec.json.encode(parts).decode()


class DiskMap(Generic[T]):
    """Records of one type (a dataclass, NamedTuple or msgspec Struct) by a text key, in the order their
    keys were first put. `put_many` adds or replaces; iterating gives the values in that order."""

    def __init__(self, kind: type[T]) -> None:
        # "" opens a temporary database: on disk past its cache, deleted when closed.
        self.connection = sqlite3.connect("", check_same_thread=False, isolation_level=None)
        for pragma in (f"cache_size = -{CACHE_KIB}", "journal_mode = OFF", "synchronous = OFF"):
            self.connection.execute(f"PRAGMA {pragma}")
        # The rowid keeps the order a key was first put in; an upsert keeps its row.
        self.connection.execute("CREATE TABLE record (key TEXT NOT NULL UNIQUE, value BLOB NOT NULL)")
        self.connection.execute("BEGIN")  # one transaction, never committed: a commit a statement cost 50 µs a record
        self.encoder = msgspec.json.Encoder()
        self.decoder = msgspec.json.Decoder(kind)
        self.list_decoder = msgspec.json.Decoder(list[kind])  # type: ignore[valid-type]
        self.count = 0

    def put_many(self, items: Iterable[tuple[str, T]]) -> None:
        encode = self.encoder.encode
        self.connection.executemany(
            "INSERT INTO record (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            ((key, encode(value)) for key, value in items),
        )
        # Rows are never deleted, so a new one's rowid is the count so far plus one (count(*) reads them all).
        self.count = self.connection.execute("SELECT coalesce(max(rowid), 0) FROM record").fetchone()[0]

    def get_many(self, keys: Collection[str]) -> dict[str, T]:
        """The records of those keys that the map holds; the keys go as one parameter (no variable limit)."""
        if not keys:
            return {}
        rows = self.connection.execute(
            "SELECT key, value FROM record WHERE key IN (SELECT value FROM json_each(?))", (json.dumps(list(keys)),)
        ).fetchall()
        return dict(zip([key for key, _ in rows], self._decoded([value for _, value in rows]), strict=True))

    def _decoded(self, values: list[bytes]) -> list[T]:
        """Records decoded together, as one JSON array: a call into msgspec a batch, not a record."""
        return self.list_decoder.decode(b"[" + b",".join(values) + b"]")

    def get(self, key: str) -> T | None:
        row = self.connection.execute("SELECT value FROM record WHERE key = ?", (key,)).fetchone()
        return None if row is None else self.decoder.decode(row[0])

    def __len__(self) -> int:
        return self.count

    def batches(self, size: int = READ_BATCH) -> Iterator[list[T]]:
        """The values in the order their keys were first put, `size` at a time."""
        cursor = self.connection.execute("SELECT value FROM record ORDER BY rowid")
        while rows := cursor.fetchmany(size):
            yield self._decoded([value for (value,) in rows])

    def items(self) -> Iterator[tuple[str, T]]:
        keys = self.connection.execute("SELECT key FROM record ORDER BY rowid")
        for batch in self.batches():
            yield from zip([key for (key,) in keys.fetchmany(len(batch))], batch, strict=True)

    def values(self) -> Iterator[T]:
        for batch in self.batches():
            yield from batch

    def __iter__(self) -> Iterator[T]:
        return self.values()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> DiskMap[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
