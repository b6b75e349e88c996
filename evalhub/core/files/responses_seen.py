"""The responses a judgment or score file names, each checked once as a row of the benchmark schema.

A labels file names a response on many rows; a later row may repeat it but not change its text. The
first sight of each (prompt, model, variant) and a hash of its text were kept in a dict: about 400
bytes a response, and a file in the shape of Chatbot Arena's votes (a new conversation a row) names two
new responses a row: 0.8 KiB a row, gigabytes at a few million votes. They are kept on disk now
(DiskMap), behind a cache of the last CACHE_SIZE seen, so a study's file (every response on many rows)
is answered from memory and an Arena file keeps a few bytes a row."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import Any, NamedTuple

from evalhub.core.files.benchmarks import ParsedFile, ResponseChecker
from evalhub.core.files.disk_map import DiskMap, key_of
from evalhub.core.files.rows import RowError

PROMPT_COLUMNS = ("prompt", "category")  # the prompt fields a labels row may carry


class FirstSight(NamedTuple):
    line: int
    digest: bytes  # of the response's text


class _Pending(NamedTuple):
    key: tuple[str, str, str]
    line: int
    digest: bytes
    response: dict[str, Any]  # the row of the benchmark schema it is checked as, if it is new
    what: str  # how an error names it ("response_a of 'gpt-4o'")


class ResponsesSeen:
    """Add each response a row names; `finish` gives the prompts and responses, checked as a benchmark
    file's are (`ResponseChecker`, in the file's order), and `errors` names each row whose response
    differs from its first sight. A row the cache cannot answer waits until SETTLE_BATCH do, then they
    are looked up on disk together."""

    CACHE_SIZE = 1 << 17
    SETTLE_BATCH = 10_000

    def __init__(self, unit: str, *, known_models: Collection[str], allow_new_models: bool) -> None:
        self.checker = ResponseChecker(
            unit, known_models=known_models, allow_new_models=allow_new_models, responses_seen_once=True
        )
        self.unit = unit
        self.errors: list[RowError] = []
        self._first = DiskMap(FirstSight)
        self._recent: dict[tuple[str, str, str], FirstSight] = {}
        self._pending: list[_Pending] = []

    def add(
        self, line: int, row: dict[str, Any], prompt_id: str, model: str, text: str, *, what: str, variant: str = ""
    ) -> None:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key = (prompt_id, model, variant)
        seen = self._recent.get(key)
        if seen is not None:
            self._compare(line, digest, seen, what)
            return
        # Only the prompt fields the row carries: a labels file leaves the rest of a stored prompt as it is.
        response = {"prompt_id": prompt_id, **{name: row[name] for name in PROMPT_COLUMNS if name in row}}
        response |= {"model": model, "response": text, **({"response_variant": variant} if variant else {})}
        self._pending.append(_Pending(key, line, digest, response, what))
        if len(self._pending) >= self.SETTLE_BATCH:
            self._settle()

    def _settle(self) -> None:
        """The waiting rows in the file's order: a response not seen before is checked and kept."""
        pending, self._pending = self._pending, []
        names = {key_of(*item.key) for item in pending}
        known = self._first.get_many(names)
        new: dict[str, FirstSight] = {}
        for item in pending:
            name = key_of(*item.key)
            seen = known.get(name)
            if seen is None:
                known[name] = new[name] = seen = FirstSight(item.line, item.digest)
                self.checker.check(item.line, item.response)
            else:
                self._compare(item.line, item.digest, seen, item.what)
            if len(self._recent) >= self.CACHE_SIZE:
                self._recent.clear()  # all of it is on disk too
            self._recent[item.key] = seen
        self._first.put_many(new.items())

    def _compare(self, line: int, digest: bytes, seen: FirstSight, what: str) -> None:
        if digest != seen.digest:
            self.errors.append(RowError(line, f"{what} differs from the one on {self.unit} {seen.line}.", self.unit))

    def finish(self) -> ParsedFile:
        """The prompts and responses, checked as a benchmark file's are."""
        self._settle()
        self._first.close()
        self._recent.clear()
        return self.checker.finish()
