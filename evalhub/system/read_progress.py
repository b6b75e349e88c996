"""How far an import has read its file, watched from beside it.

The importers read a file as their parsers like: a gzip stream through its decompressor, Parquet by
seeking to its footer, the whole file again for its digest once the rows are stored. Wrapping the
stream to count what passes through would have to speak every one of those interfaces. The operating
system already knows the answer: a thread reads the descriptor's offset (`lseek(fd, 0, SEEK_CUR)`,
which moves nothing) every so often and reports the furthest point reached, so a parser that seeks
back, or a second pass, never makes the figure go backwards.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import IO, Any

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


def _descriptor(stream: IO[bytes] | Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):  # bytes in memory (a small upload): nothing to watch
        return None


class ReadProgress(threading.Thread):
    """Calls `report(bytes read so far)` every `every` seconds while the `with` block reads `stream`,
    and once more at its end; nothing for a stream without a descriptor. `report` runs on this thread:
    what it writes to the database goes through this thread's own connection, closed at the end."""

    def __init__(self, stream: IO[bytes] | Any, report: Callable[[int], object], *, every: float = 1.0) -> None:
        super().__init__(name="evalhub-read-progress", daemon=True)
        self.fd, self.report, self.every = _descriptor(stream), report, every
        self.furthest = 0
        self._done = threading.Event()

    def __enter__(self) -> ReadProgress:
        if self.fd is not None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self.is_alive():
            self.join(timeout=10)

    def look(self) -> int:
        """The furthest offset the file has been read to."""
        if self.fd is not None:
            try:
                self.furthest = max(self.furthest, os.lseek(self.fd, 0, os.SEEK_CUR))
            except OSError:  # closed under us: the last figure stands
                pass
        return self.furthest

    def run(self) -> None:
        try:
            reported = -1
            while not self._done.wait(self.every):
                reported = self._report(reported)
            self._report(reported)
        finally:
            connection.close()  # this thread's own, if `report` opened one

    def _report(self, reported: int) -> int:
        furthest = self.look()
        if furthest == reported:
            return reported
        try:
            self.report(furthest)
        except DatabaseError:  # a busy database (SQLite's write lock during the import): the next look says it
            logger.debug("read progress not reported", exc_info=True)
            return reported
        return furthest
