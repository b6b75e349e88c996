"""A candidate judge's agreement with people on train pairs, asked afresh: what the improvement jobs
score their candidates by. The pairs and people's verdicts come from the training set (train prompts
only); the candidate is asked exactly as a run with its definition would ask."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from evalhub.alignment.actions import judge_run_fields
from evalhub.alignment.models import JudgeVersion
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.core.scaleeval.debate import ask_for_verdict
from evalhub.debates.judging import judge_messages
from evalhub.debates.models import Debate, DebateRun, JudgeRun
from evalhub.jobs.config import RunConfig
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client

FIRST, SECOND = 1, 2


@dataclass(frozen=True)
class OnTrainPairs(RunConfig):
    """What every improvement job scored on a debate run's train pairs is configured with."""

    version: JudgeVersion
    reference: DebateRun  # whose debates on the split's train prompts are asked
    split: Any  # catalog.LabelSplit (improvers read no catalog model: labels come through the training set)
    field_models: ClassVar[dict[str, str]] = {"split": "catalog.LabelSplit"}  # what `split` is, for the API

    def split_errors(self) -> list[str]:
        if self.reference.benchmark_id != self.split.benchmark_id:
            return ["The debate run's pairs must come from the split benchmark."]
        return []

    def shown_on(self) -> dict[str, Any]:
        return {"version": str(self.version), "reference": self.reference.name, "split": self.split.benchmark.slug}


@dataclass(frozen=True)
class ProposedOnTrainPairs(OnTrainPairs):
    """An improvement job whose candidate a proposer model writes (its instructions, its guidelines)."""

    spec_fields = ("proposer",)
    proposer: str = ""  # provider spec
    seed: int = 0

    def proposer_errors(self) -> list[str]:
        return self.split_errors() + ([] if self.proposer.strip() else ["Name the proposer's provider spec."])

    def shown_proposed(self, **settings: Any) -> dict[str, Any]:
        return self.shown_on() | {"proposer": self.proposer, **settings, "seed": self.seed}


def train_agreement(judge: JudgeDefinition, reference: DebateRun, pairs: Sequence[TrainingPair]) -> tuple[int, int]:
    """(agreed, judged): the candidate's verdicts on `reference`'s debates of the train `pairs`."""
    people = {pair.item: pair.people for pair in pairs}
    found = reference.debates.select_related("run__criterion", "prompt", "response_a", "response_b")
    debates = [debate for debate in found if _item(debate) in people]
    verdicts = _ask(judge, reference, debates)
    judged = [(debate, verdict) for debate, verdict in verdicts.items() if verdict is not None]
    agreed = sum(_canonical(debate, verdict) == people[_item(debate)] for debate, verdict in judged)
    return agreed, len(judged)


def _item(debate: Debate) -> tuple[str, int, int]:
    low, high = sorted((debate.response_a_id, debate.response_b_id))
    return (debate.run.criterion.slug, low, high)


def _canonical(debate: Debate, verdict: int) -> int:
    """A verdict in the order shown → the pair's order (its lower response id first)."""
    first, _ = debate.shown
    if verdict not in (FIRST, SECOND) or first.pk == min(debate.response_a_id, debate.response_b_id):
        return verdict
    return SECOND if verdict == FIRST else FIRST


def _ask(judge: JudgeDefinition, reference: DebateRun, debates: list[Debate]) -> dict[Debate, int | None]:
    """Each debate's verdict from the candidate (the majority of its samples), in the order shown."""
    run = JudgeRun(reference=reference, **judge_run_fields(judge))  # unsaved: the prompt such a run would ask
    try:
        client = chat_client(judge.spec)
    except (LLMError, UnknownProvider, ValueError):
        return {debate: None for debate in debates}
    answers: dict[Debate, list[int | None]] = {debate: [] for debate in debates}

    async def one(debate: Debate, sample: int) -> None:
        async def ask(messages: list[dict[str, str]]) -> tuple[str, Any]:
            completion = await client.complete(
                messages, temperature=judge.temperature, max_tokens=512, repeat=sample if judge.samples > 1 else None
            )
            return completion.text, completion.stats()

        try:
            answers[debate].append((await ask_for_verdict(judge_messages(run, debate, False), ask)).verdict)
        except LLMError:
            answers[debate].append(None)

    async def all_of_them() -> None:
        try:
            await asyncio.gather(*(one(debate, sample) for debate in debates for sample in range(judge.samples)))
        finally:
            await client.aclose()

    event_loop.run(all_of_them())
    out: dict[Debate, int | None] = {}
    for debate, given in answers.items():
        read = Counter(verdict for verdict in given if verdict is not None)
        out[debate] = read.most_common(1)[0][0] if read else None
    return out
