"""A persistent cache of model responses, keyed by everything that determines the answer.

Deterministic calls (temperature 0) are cached; sampled calls only when the caller names a
seed or a repeat index, so that asking for "the 3rd sample" twice gives the same sample
while fresh samples stay fresh.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evalhub.llm.types import Completion, Message


def cache_key(provider: str, model: str, endpoint: str, messages: list[Message], params: dict[str, Any]) -> str:
    payload = {"provider": provider, "model": model, "endpoint": endpoint, "messages": messages, "params": params}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def is_cacheable(temperature: float, seed: int | None, repeat: int | None) -> bool:
    return temperature == 0 or seed is not None or repeat is not None


class ResponseCache:
    """SQLite on disk (or in memory with path ':memory:'); safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # WAL without a sync on every commit: puts run on the event loop of a batch of debates, and
        # an fsync per call blocked it (the largest blocking frame in a profile of 100 debates). A
        # power cut may lose the last few entries; those calls are simply made again.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        completion = Completion(**json.loads(row[0]))
        completion.cached, completion.cost_usd, completion.latency_s = True, 0.0, 0.0
        return completion

    def put(self, key: str, completion: Completion) -> None:
        stored = json.dumps({**asdict(completion), "cached": False}, ensure_ascii=False, default=str)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)", (key, stored))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
