"""Few-shot from disagreements: a new version of a judge whose prompt carries worked examples taken
from the train pairs it got wrong (the rule of evalhub.core.alignment.fewshot)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from evalhub.alignment.actions import VersionRejected, do_derive_version
from evalhub.alignment.improvers.base import ImproverRunner
from evalhub.alignment.models import FewShotRun, JudgeVersion, Method
from evalhub.alignment.training_set import pair_texts, training_pairs, training_split
from evalhub.core.alignment.fewshot import Example, choose_examples
from evalhub.core.alignment.versions import JudgeDefinition, WorkedExample
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs.chunks import Settled
from evalhub.jobs.config import RunConfig
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import Plan

MOST_EXAMPLES = 16
FEW_SHOT = "few_shot"


def few_shot_examples(split: Any, criterion: str, judge: str, *, k: int = 4, seed: int = 0) -> list[Example]:
    """Up to k examples by the rule of evalhub.core.alignment.fewshot, from the split's train labels only."""
    return choose_examples(training_pairs(split, criterion, judge), k, seed)


def few_shot_definition(
    version: JudgeVersion, split: Any, criterion: str, *, k: int = 4, seed: int = 0
) -> tuple[JudgeDefinition, str]:
    """`version`'s definition with up to k worked examples from the train pairs of `split` (a
    catalog.LabelSplit) where it (run on them) and people disagree, and a note saying where they came
    from. Raises VersionRejected."""
    benchmark = split.benchmark.slug
    if not 1 <= k <= MOST_EXAMPLES:
        raise VersionRejected(f"ask for between 1 and {MOST_EXAMPLES} examples.")
    pairs = training_pairs(split, criterion, str(version))
    if not any(pair.judge >= 0 for pair in pairs):
        raise VersionRejected(f"{version} has no verdict on {benchmark}'s train pairs: run it on them first.")
    chosen = choose_examples(pairs, k, seed)
    if not chosen:
        raise VersionRejected(f"{version} agrees with people on every train pair: no example to learn from.")
    texts = pair_texts([example.item for example in chosen])
    examples = []
    for example in chosen:
        question, first, second = texts[example.item]
        if example.reversed:
            first, second = second, first
        examples.append(WorkedExample(question, first, second, example.verdict, example.category))
    wrong = sum(pair.judge != pair.people for pair in pairs)
    note = (
        f"{len(examples)} worked example(s) from {wrong} train disagreement(s) of {len(pairs)} train pair(s) "
        f"on {benchmark} ({criterion}), chosen by the fixed rule with seed {seed}."
    )
    return replace(version.judge, examples=tuple(examples)), note


def do_improve_with_examples(
    version: JudgeVersion, benchmark: str, criterion: str, *, k: int = 4, seed: int = 0, user: Any = None
) -> JudgeVersion:
    """The next version of `version`'s judge, with the examples of `few_shot_definition`."""
    split = training_split(benchmark)
    definition, note = few_shot_definition(version, split, criterion, k=k, seed=seed)
    return do_derive_version(version, definition, method=Method.FEW_SHOT, split=split, user=user, note=note)


@dataclass(frozen=True)
class FewShotConfig(RunConfig):
    version: JudgeVersion
    split: Any  # catalog.LabelSplit (improvers read no catalog model: labels come through the training set)
    field_models: ClassVar[dict[str, str]] = {"split": "catalog.LabelSplit"}  # what `split` is, for the API
    criterion: str
    examples: int = 4
    seed: int = 0

    def errors(self) -> list[str]:
        return [] if 1 <= self.examples <= MOST_EXAMPLES else [f"Ask for between 1 and {MOST_EXAMPLES} examples."]

    def shown(self) -> dict[str, Any]:
        return {
            "version": str(self.version),
            "split": self.split.benchmark.slug,
            "criterion": self.criterion,
            "examples": self.examples,
            "seed": self.seed,
        }


class FewShotRunner(ImproverRunner[FewShotRun, dict[str, Any]]):
    """One unit: the examples chosen (work), stored once (write); the next version made (finish)."""

    kind = FEW_SHOT
    method = Method.FEW_SHOT
    model = FewShotRun
    config = FewShotConfig

    @classmethod
    def plan(cls, config: FewShotConfig, run: FewShotRun | None, size: int | None) -> Plan:
        return Plan(f"Examples for {config.version} from {config.split.benchmark.slug}'s train disagreements", [0], 1)

    def work(self, chunk: JobChunk) -> dict[str, Any]:
        run = self.run
        try:
            definition, note = few_shot_definition(run.version, run.split, run.criterion, k=run.examples, seed=run.seed)
        except VersionRejected as rejected:
            return {"problem": str(rejected)}
        return {"definition": definition.as_json(), "note": note}

    def write(self, chunk: JobChunk, result: dict[str, Any]) -> int:
        FewShotRun.objects.filter(pk=self.run.pk, chosen__isnull=True).update(chosen=result)
        return 1 if "problem" in result else 0

    def finish(self, job: Job) -> Settled:
        run = FewShotRun.objects.get(pk=self.run.pk)
        chosen = run.chosen or {}
        if "definition" not in chosen:
            problem = chosen.get("problem", "nothing was chosen.")
            return Settled(problem, {}, Outcome(planned=1, produced=0, failed=1, cause=problem))
        made = self.make_version(JudgeDefinition.from_json(chosen["definition"]), chosen["note"])
        return Settled(f"{made} made: {chosen['note']}", {"made": str(made)}, Outcome(planned=1, produced=1))
