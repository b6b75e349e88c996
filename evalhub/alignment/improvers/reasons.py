"""Learning from people's reasons, a job (after MLflow's MemAlign). From the version's train pairs where it
disagreed with people, the reasons people wrote (a label's rationale, an adjudicator's notes: read through
the training set, train prompts only) are put to a proposer model, which distils them into numbered
guidelines: the candidate's instructions (a semantic memory, diffable between versions). Up to `examples`
of the disagreements people explained are kept as worked examples (an episodic memory, the few-shot
rule's choice under the seed). The candidate is scored on the train pairs beside the version; if it agrees
with people more it becomes the next version, which the versions page compares with its parent on
held-out pairs, as every method's."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import asdict, dataclass, replace
from typing import Any

from evalhub.alignment.improvers.base import ImproverRunner
from evalhub.alignment.improvers.rewriting import as_shown, propose
from evalhub.alignment.improvers.train_scoring import ProposedOnTrainPairs, train_agreement
from evalhub.alignment.models import Method, ReasonsRun
from evalhub.alignment.training_set import train_reasons
from evalhub.core.alignment.fewshot import TrainingPair, choose_examples
from evalhub.core.alignment.reasons import Explained, distil_messages, parse_guidelines
from evalhub.core.alignment.versions import WorkedExample
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import Plan
from evalhub.llm.types import LLMError, UnknownProvider

REASONS = "reasons"
MOST_EXAMPLES = 8
EXPLAINED_SHOWN = 12  # disagreements put to the proposer at most


@dataclass(frozen=True)
class ReasonsConfig(ProposedOnTrainPairs):
    examples: int = 4

    def errors(self) -> list[str]:
        errors = self.proposer_errors()
        if not 0 <= self.examples <= MOST_EXAMPLES:
            errors.append(f"Keep between 0 and {MOST_EXAMPLES} explained disagreements as examples.")
        return errors

    def shown(self) -> dict[str, Any]:
        return self.shown_proposed(examples=self.examples)


def explained_disagreements(
    pairs: list[TrainingPair], reasons: dict[Hashable, list[str]], seed: int, most: int
) -> list[tuple[Explained, str]]:
    """Up to `most` train disagreements people explained, by the few-shot rule under `seed` (categories in
    turn, one per prompt, every second one shown reversed), each with its category."""
    explained = [pair for pair in pairs if pair.item in reasons and pair.judge != pair.people]
    if not explained:
        return []
    chosen = choose_examples(explained, most, seed)
    shown = as_shown(chosen, explained)
    return [
        (Explained(pair, tuple(reasons[example.item])), example.category)
        for example, pair in zip(chosen, shown, strict=True)
    ]


class ReasonsRunner(ImproverRunner[ReasonsRun, dict[str, Any]]):
    method = Method.REASONS
    kind = REASONS
    model = ReasonsRun
    related = ("reference__criterion",)
    config = ReasonsConfig

    @classmethod
    def plan(cls, config: ReasonsConfig, run: ReasonsRun | None, size: int | None) -> Plan:
        title = f"Guidelines for {config.version} from people's reasons on {config.split.benchmark.slug}"
        return Plan(title, [0], 1)

    def work(self, chunk: JobChunk) -> dict[str, Any]:
        run = self.run
        criterion = run.reference.criterion
        pairs = self.train_pairs(criterion.slug)
        disagreeing = [pair for pair in pairs if pair.judge != pair.people]
        reasons = train_reasons(run.split, disagreeing)
        explained = explained_disagreements(pairs, reasons, run.seed, EXPLAINED_SHOWN)
        current = run.version.judge
        found: dict[str, Any] = {"disagreements": len(disagreeing), "explained": len(explained)}
        found["current"] = list(train_agreement(current, run.reference, pairs))
        if not explained:
            return found
        messages = distil_messages(
            current.instructions, f"{criterion.name}: {criterion.definition}", [e for e, _ in explained]
        )
        try:
            guidelines = parse_guidelines(propose(run.proposer, messages))
        except (LLMError, UnknownProvider, ValueError) as error:
            return found | {"error": str(error)}
        examples = tuple(
            WorkedExample(e.pair.question, e.pair.first, e.pair.second, e.pair.people, category)
            for e, category in explained[: run.examples]
        )
        candidate = replace(
            current,
            instructions=guidelines or current.instructions,
            examples=(*current.examples, *examples)[:MOST_EXAMPLES],
        )
        found |= {
            "guidelines": guidelines,
            "examples": [asdict(example) for example in examples],
            "candidate": list(train_agreement(candidate, run.reference, pairs)),
        }
        return found

    def write(self, chunk: JobChunk, result: dict[str, Any]) -> int:
        self.run.chosen = result
        self.run.save(update_fields=["chosen"])
        return 0

    def finish(self, job: Job) -> Settled:
        run = self.run
        found = run.chosen or {}
        agreed, judged = found.get("current", [0, 0])
        if not found.get("explained"):
            cause = f"None of the {found.get('disagreements', 0)} train disagreements carries people's written reasons."
            return Settled(cause, found, Outcome(planned=1, produced=0, cause=cause))
        if "candidate" not in found or not found.get("guidelines"):
            cause = "The proposer gave no numbered guidelines" + (f": {found['error']}" if "error" in found else ".")
            return Settled(cause, found, Outcome(planned=1, produced=0, cause=cause))
        new_agreed, new_judged = found["candidate"]
        scores = f"{new_agreed}/{new_judged} train pairs agreed, the version {agreed}/{judged}"
        if not new_judged or (judged and new_agreed / new_judged <= agreed / judged):
            return Settled(
                f"The guidelines did not beat the version on the train pairs ({scores}); no new version.",
                found,
                Outcome(1, 1),
            )
        examples = [WorkedExample(**example) for example in found["examples"]]
        definition = replace(
            run.version.judge,
            instructions=found["guidelines"],
            examples=(*run.version.judge.examples, *examples)[:MOST_EXAMPLES],
        )
        note = f"Guidelines distilled by {run.proposer} from people's reasons on {found['explained']} train "
        note += f"disagreements ({scores})."
        made = self.make_version(definition, note)
        return Settled(f"{made} made: {scores}.", found | {"made": str(made)}, Outcome(1, 1))
