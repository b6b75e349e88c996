"""The response cache only saves calls: when another process keeps it locked, a read is a miss and a
write is skipped, and the call itself goes on."""

from __future__ import annotations

import multiprocessing
import sqlite3

from evalhub.llm.cache import ResponseCache, cache_thread
from evalhub.llm.types import Completion


def test_a_cache_locked_by_another_process_costs_a_miss_not_the_call(tmp_path, caplog):
    path = tmp_path / "cache.sqlite3"
    first = ResponseCache(path)
    first.put("k", Completion(text="stored before", provider="p", model="m"))
    first._db.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # another worker mid-write (or killed there), a slow disk
    holder.execute("DELETE FROM responses WHERE key = 'nothing'")
    try:
        cache = ResponseCache(path, busy_seconds=0.1)  # opening does not fail
        assert cache.get("k") is None
        cache.put("other", Completion(text="answer", provider="p", model="m"))  # does not raise
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert cache.get("k").text == "stored before", "readable again once the lock is gone"
    assert "response cache unavailable for a read" in caplog.text
    assert "response cache unavailable for a write" in caplog.text


def _answer_in_the_cache_thread(results) -> None:
    results.put(cache_thread().submit(lambda: "answered").result(timeout=5))


def test_a_forked_worker_reads_and_writes_the_cache_in_a_thread_of_its_own():
    """Celery's prefork workers are forked after the parent may have used the cache: the parent's
    thread does not exist in a child, and work handed to it there would wait for ever."""
    assert cache_thread().submit(lambda: "parent").result(timeout=5) == "parent"
    fork = multiprocessing.get_context("fork")
    results = fork.Queue()
    child = fork.Process(target=_answer_in_the_cache_thread, args=(results,))
    child.start()
    child.join(20)
    assert child.exitcode == 0 and results.get(timeout=5) == "answered"
