"""The database thread's group commit: what queues up during a write goes in the next one."""

from __future__ import annotations

import asyncio
import threading

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
