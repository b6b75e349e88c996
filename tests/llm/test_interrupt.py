"""Calls stop between calls once a runner's stop check gives a reason."""

from __future__ import annotations

import asyncio

import pytest

from evalhub.llm import interrupt
from evalhub.llm.providers.heuristic import HeuristicJudge

RATE = [{"role": "user", "content": "[Question]: Why?\n[Response]: Because it rains."}]


def test_a_call_after_the_stop_raises_interrupted_and_calls_before_it_answer():
    judge = HeuristicJudge()
    reason = ""

    async def calls() -> list[str]:
        nonlocal reason
        answers = [(await judge.complete(RATE)).text]
        reason = "cancel"
        answers.append((await judge.complete(RATE)).text)
        return answers

    with interrupt.stopping_when(lambda: reason), pytest.raises(interrupt.Interrupted) as stopped:
        asyncio.run(calls())
    assert stopped.value.reason == "cancel"
    assert judge.meter.calls == 1


def test_the_stop_reaches_calls_made_in_tasks_the_block_starts():
    judge = HeuristicJudge()

    async def many() -> None:
        await asyncio.gather(*(judge.complete(RATE) for _ in range(5)))

    with interrupt.stopping_when(lambda: "pause"), pytest.raises(interrupt.Interrupted):
        asyncio.run(many())
    assert judge.meter.calls == 0


def test_outside_a_block_nothing_is_ever_interrupted():
    judge = HeuristicJudge()
    asyncio.run(judge.complete(RATE))
    interrupt.check()
    assert judge.meter.calls == 1


async def test_a_call_cancelled_as_its_answer_arrives_is_cancelled_not_answered():
    """A cancel (a closed socket, a stopped worker) landing in the step a provider's answer arrived
    was swallowed by Python 3.11's asyncio.wait_for around the call (CPython gh-86296): the caller
    got the answer and went on as if nothing had asked it to stop."""
    from evalhub.llm.base import ChatClient
    from evalhub.llm.types import Completion

    started, answer = asyncio.Event(), asyncio.Event()

    class SlowModel(ChatClient):
        provider = "slow"

        async def _complete_once(self, messages, sampling) -> Completion:
            started.set()
            await answer.wait()
            return Completion("1", self.provider, self.model)

    calling = asyncio.ensure_future(SlowModel("m").complete(RATE))
    await started.wait()
    answer.set()  # the answer arrives...
    calling.cancel()  # ...in the same step as the cancel
    await asyncio.wait({calling}, timeout=10)
    assert calling.cancelled()
