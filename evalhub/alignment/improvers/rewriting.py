"""Instruction rewriting, a job: unit 0 scores the version's current instructions on the train pairs;
each further unit asks the proposer for revised instructions from a few train disagreements (a
different few each, by the few-shot rule and the unit's seed) and scores them the same way. When every
unit is in, the best proposal that beats the current instructions becomes the next version; none that
does leaves the version as it is, and the job says so. Held-out labels are never read: the pairs, the
disagreements and people's verdicts come from the training set."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from evalhub.alignment.improvers.base import ImproverRunner
from evalhub.alignment.improvers.train_scoring import ProposedOnTrainPairs, train_agreement
from evalhub.alignment.models import InstructionRewrite, Method, ProposalScore
from evalhub.alignment.training_set import pair_texts
from evalhub.core.alignment.fewshot import Example, TrainingPair, choose_examples
from evalhub.core.alignment.rewriting import Disagreement, parse_instructions, rewrite_messages
from evalhub.core.judge_lab.measures import FIRST, NO_VERDICT, SECOND
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import Plan
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client

INSTRUCTION_REWRITE = "instruction_rewrite"
MOST_PROPOSALS = 8
DISAGREEMENTS_SHOWN = 6


@dataclass(frozen=True)
class InstructionRewriteConfig(ProposedOnTrainPairs):
    proposals: int = 4

    def errors(self) -> list[str]:
        errors = self.proposer_errors()
        if not 1 <= self.proposals <= MOST_PROPOSALS:
            errors.append(f"Ask for between 1 and {MOST_PROPOSALS} proposals.")
        return errors

    def shown(self) -> dict[str, Any]:
        return self.shown_proposed(proposals=self.proposals)


def propose(spec: str, messages: list[dict[str, str]]) -> str:
    """The proposer's answer (its own call: tests and the offline demo put a scripted proposer here)."""
    client = chat_client(spec)

    async def ask() -> str:
        try:
            return (await client.complete(messages, temperature=0.7, max_tokens=400)).text
        finally:
            await client.aclose()

    return event_loop.run(ask())


class InstructionRewriteRunner(ImproverRunner[InstructionRewrite, dict[int, tuple[str, int, int]]]):
    method = Method.REWRITE
    kind = INSTRUCTION_REWRITE
    model = InstructionRewrite
    related = ("reference__criterion",)
    config = InstructionRewriteConfig

    @classmethod
    def plan(cls, config: InstructionRewriteConfig, run: InstructionRewrite | None, size: int | None) -> Plan:
        title = f"Instructions for {config.version} from {config.split.benchmark.slug}'s train disagreements"
        return Plan(title, list(range(config.proposals + 1)), 1)

    def work(self, chunk: JobChunk) -> dict[int, tuple[str, int, int]]:
        """Per unit: (the instructions scored, agreed, judged) on the train pairs; judged 0 where the
        proposer gave nothing usable."""
        rewrite = self.run
        criterion = rewrite.reference.criterion
        pairs = self.train_pairs(criterion.slug)
        out = {}
        for unit in chunk.unit_ids:
            instructions = rewrite.version.judge.instructions
            if unit > 0:
                shown = _disagreements(pairs, rewrite.seed + unit)
                messages = rewrite_messages(instructions, f"{criterion.name}: {criterion.definition}", shown)
                try:
                    instructions = parse_instructions(propose(rewrite.proposer, messages))
                except (LLMError, UnknownProvider, ValueError):
                    instructions = ""
                if not instructions:
                    out[unit] = ("", 0, 0)
                    continue
            judge = replace(rewrite.version.judge, instructions=instructions)
            out[unit] = (instructions, *train_agreement(judge, rewrite.reference, pairs))
        return out

    def write(self, chunk: JobChunk, result: dict[int, tuple[str, int, int]]) -> int:
        ProposalScore.objects.bulk_create(
            [
                ProposalScore(rewrite=self.run, proposal=unit, instructions=text, agreed=agreed, judged=judged)
                for unit, (text, agreed, judged) in result.items()
            ],
            ignore_conflicts=True,  # a chunk delivered twice scores its proposal once
        )
        return sum(judged == 0 for _, _, judged in result.values())

    def finish(self, job: Job) -> Settled:
        rewrite = self.run
        scores = {score.proposal: score for score in rewrite.scores.all()}
        usable = {unit: score for unit, score in scores.items() if score.judged}
        outcome = Outcome(planned=rewrite.proposals + 1, produced=len(usable), failed=len(scores) - len(usable))
        lines = [
            f"{'current instructions' if unit == 0 else f'proposal {unit}'}: "
            + (f"{score.agreed}/{score.judged} train pairs agreed" if score.judged else "nothing usable")
            for unit, score in sorted(scores.items())
        ]
        summary = {"scores": {str(unit): [s.agreed, s.judged] for unit, s in scores.items()}}
        baseline = usable.get(0)
        proposals = [(score.accuracy or 0.0, -unit) for unit, score in usable.items() if unit > 0]
        if baseline is None or not proposals:
            return Settled(
                "No proposal could be scored against the current instructions. " + "; ".join(lines), summary, outcome
            )
        accuracy, best = max(proposals)
        best = -best
        if accuracy <= (baseline.accuracy or 0.0):
            kept = "No proposal beat the current instructions on the train pairs; no new version. "
            return Settled(kept + "; ".join(lines), summary, outcome)
        definition = replace(rewrite.version.judge, instructions=usable[best].instructions)
        note = f"Instructions rewritten by {rewrite.proposer}: {'; '.join(lines)}. Kept proposal {best}."
        made = self.make_version(definition, note)
        top = usable[best]
        message = f"{made} made with proposal {best} ({top.agreed}/{top.judged} train pairs agreed, the current "
        message += f"instructions {baseline.agreed}/{baseline.judged}); its note lists every proposal."
        return Settled(message, summary | {"made": str(made)}, outcome)


def _disagreements(pairs: list[TrainingPair], seed: int) -> list[Disagreement]:
    """A few train disagreements (the few-shot rule's choice under `seed`), in the order shown."""
    chosen = choose_examples(pairs, DISAGREEMENTS_SHOWN, seed) if any(p.judge != p.people for p in pairs) else []
    return as_shown(chosen, pairs)


def as_shown(chosen: list[Example], pairs: list[TrainingPair]) -> list[Disagreement]:
    """The chosen examples as a proposer is shown them: the pair's texts, in the order the rule chose
    (reversed ones with their responses and the judge's verdict turned), people's verdict and the judge's."""
    judged = {pair.item: pair.judge for pair in pairs}
    texts = pair_texts([example.item for example in chosen])
    out = []
    for example in chosen:
        question, first, second = texts[example.item]
        judge: int | None = judged[example.item]
        if example.reversed:
            first, second = second, first
            judge = {FIRST: SECOND, SECOND: FIRST}.get(judge, judge) if judge is not None else None
        out.append(Disagreement(question, first, second, example.verdict, None if judge == NO_VERDICT else judge))
    return out
