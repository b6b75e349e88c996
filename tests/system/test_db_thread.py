"""The database thread's group commit: what queues up during a write goes in the next one."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db import connection
from django.utils import timezone

from evalhub.db_pool import pooled
from evalhub.jobs.chunks import Heartbeat
from evalhub.jobs.models import Job, JobChunk
from evalhub.system.db_thread import DatabaseThread, GroupCommit


class Recorder:
    """write_many that records each batch; the first write waits until released."""

    def __init__(self, fail_on=None) -> None:
        self.batches: list[list] = []
        self.release = threading.Event()
        self.fail_on = fail_on

    def write_many(self, items: list) -> list:
        if not self.batches:
            self.release.wait(5)
        self.batches.append(list(items))
        if self.fail_on in items:
            raise RuntimeError("disk full")
        return [f"stored {item}" for item in items]


async def test_items_added_while_a_write_runs_go_together_in_the_next_write():
    recorder = Recorder()
    async with DatabaseThread() as db:
        commit = GroupCommit(db, recorder.write_many)
        first = asyncio.ensure_future(commit.add("a"))
        await asyncio.sleep(0.05)  # "a" is being written (and held) by now
        rest = [asyncio.ensure_future(commit.add(item)) for item in "bcd"]
        await asyncio.sleep(0.05)
        recorder.release.set()
        results = await asyncio.gather(first, *rest)
    assert recorder.batches == [["a"], ["b", "c", "d"]]
    assert results == ["stored a", "stored b", "stored c", "stored d"], "each waiter gets its own item's result"


async def test_a_lone_item_is_written_at_once_and_add_returns_its_result_after_the_write():
    recorder = Recorder()
    recorder.release.set()
    async with DatabaseThread() as db:
        commit = GroupCommit(db, recorder.write_many)
        assert await commit.add("x") == "stored x"
        assert recorder.batches == [["x"]]
        assert await commit.add("y") == "stored y"
    assert recorder.batches == [["x"], ["y"]]


async def test_a_failed_write_fails_every_item_it_carried_and_the_next_write_goes_on():
    recorder = Recorder(fail_on="bad")
    async with DatabaseThread() as db:
        commit = GroupCommit(db, recorder.write_many)
        first = asyncio.ensure_future(commit.add("a"))
        await asyncio.sleep(0.05)
        carried = [asyncio.ensure_future(commit.add(item)) for item in ("b", "bad")]
        await asyncio.sleep(0.05)
        recorder.release.set()
        await first
        results = await asyncio.gather(*carried, return_exceptions=True)
        assert [str(r) for r in results] == ["disk full", "disk full"]
        await commit.add("later")
    assert recorder.batches[-1] == ["later"]


async def test_a_writer_that_returns_the_wrong_number_of_results_fails_its_items_instead_of_leaving_them_waiting():
    async with DatabaseThread() as db:
        commit = GroupCommit(db, lambda items: ["one result"])
        results = await asyncio.wait_for(
            asyncio.gather(commit.add("a"), commit.add("b"), return_exceptions=True), timeout=5
        )
    assert [str(r) for r in results] == ["<lambda> returned 1 results for 2"] * 2


needs_pool = pytest.mark.skipif(not pooled(), reason="PostgreSQL with a connection pool (DATABASE_URL=postgres://…)")


def holds_a_connection() -> bool:
    return connection.connection is not None


@needs_pool
@pytest.mark.django_db(transaction=True)
async def test_a_runners_database_thread_gives_its_pooled_connection_back_after_every_call():
    """A runner awaits its models between calls: holding a connection meanwhile would let a
    worker's threads outnumber the pool and wait on each other."""
    async with DatabaseThread() as db:
        assert await db.run(lambda: Job.objects.count()) == 0
        assert not await db.run(holds_a_connection)


@needs_pool
@pytest.mark.django_db(transaction=True)
def test_a_chunks_heartbeat_gives_its_pooled_connection_back_after_every_beat():
    job = Job.objects.create(kind="debate_run", title="t", progress_total=1)
    chunk = JobChunk.objects.create(job=job, index=0, unit_ids=[1], attempts=1, heartbeat_at=timezone.now())
    held: list[bool] = []

    def beat_in_its_own_thread() -> None:
        Heartbeat(chunk, attempt=1).beat()
        held.append(holds_a_connection())

    thread = threading.Thread(target=beat_in_its_own_thread)
    thread.start()
    thread.join(10)
    assert held == [False]
    assert JobChunk.objects.get(pk=chunk.pk).heartbeat_at > chunk.heartbeat_at, "the beat was stamped"
