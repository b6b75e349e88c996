"""Choice of settings: a version's criteria variant, privileged sources and samples per pair, chosen by
agreement with people on the split's train pairs. A job: each candidate is a unit, asked about every
train pair of a debate run (with the engine's pause, resume and cancel); when the last is scored, the
best candidate becomes the next version, or the version keeps its own settings when they scored best.
Held-out labels are never read: the pairs and people's verdicts come from the training set."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from evalhub.alignment.actions import VersionRejected, do_derive_version
from evalhub.alignment.models import CandidateScore, JudgeVersion, Method, SettingsSearch
from evalhub.alignment.training_set import training_pairs
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.core.prompts.criteria_variants import ORIGINAL, VARIANTS
from evalhub.core.runs.outcomes import Outcome
from evalhub.core.scaleeval.debate import ask_for_verdict
from evalhub.debates.judging import judge_messages
from evalhub.debates.models import Debate, DebateRun, JudgeRun
from evalhub.jobs.chunks import Settled
from evalhub.jobs.config import RunConfig
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client

SETTINGS_SEARCH = "settings_search"
SETTINGS = ("criteria_variant", "privileged_sources", "samples")
MOST_CANDIDATES = 12
FIRST, SECOND = 1, 2


@dataclass(frozen=True)
class SettingsSearchConfig(RunConfig):
    version: JudgeVersion
    reference: DebateRun  # whose pairs on the split's train prompts are asked
    split: Any  # catalog.LabelSplit (improvers read no catalog model: labels come through the training set)
    candidates: Sequence[Mapping[str, Any]]  # each: some of SETTINGS

    def errors(self) -> list[str]:
        errors = []
        if not 1 <= len(self.candidates) <= MOST_CANDIDATES:
            errors.append(f"Give between 1 and {MOST_CANDIDATES} candidate settings.")
        for number, candidate in enumerate(self.candidates, start=1):
            unknown = sorted(set(candidate) - set(SETTINGS))
            if unknown:
                errors.append(f"Candidate {number} sets {', '.join(unknown)}; a candidate sets {', '.join(SETTINGS)}.")
            variant = candidate.get("criteria_variant", ORIGINAL)
            if variant != ORIGINAL and variant not in VARIANTS:
                errors.append(f"Candidate {number}: unknown criteria variant {variant!r}.")
            if not 1 <= int(candidate.get("samples", 1)) <= 9:
                errors.append(f"Candidate {number}: samples per pair between 1 and 9.")
        if self.reference.benchmark_id != self.split.benchmark_id:
            errors.append("The debate run's pairs must come from the split benchmark.")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "version": str(self.version),
            "reference": self.reference.name,
            "split": self.split.benchmark.slug,
            "candidates": [dict(candidate) for candidate in self.candidates],
        }


def candidate_definition(version: JudgeVersion, candidate: Mapping[str, Any]) -> JudgeDefinition:
    settings = dict(candidate)
    if "privileged_sources" in settings:
        settings["privileged_sources"] = tuple(sorted(settings["privileged_sources"]))
    return replace(version.judge, **settings)


class SettingsSearchRunner(JobRunner[SettingsSearch, dict[int, tuple[int, int]]]):
    kind = SETTINGS_SEARCH
    run_attr = "settings_search"
    config = SettingsSearchConfig

    @classmethod
    def plan(cls, config: SettingsSearchConfig, run: SettingsSearch | None, size: int | None) -> Plan:
        title = f"Settings for {config.version} on {config.split.benchmark.slug}'s train pairs"
        return Plan(title, list(range(len(config.candidates))), 1)

    @classmethod
    def load(cls, job_id: int) -> SettingsSearch:
        return SettingsSearch.objects.select_related("version", "reference__criterion", "split__benchmark").get(
            job_id=job_id
        )

    def work(self, chunk: JobChunk) -> dict[int, tuple[int, int]]:
        """Per candidate of the chunk: (agreed, judged) with people on the train pairs."""
        search = self.run
        pairs = training_pairs(search.split.benchmark.slug, search.reference.criterion.slug, str(search.version))
        people = {pair.item: pair.people for pair in pairs}
        debates = [
            debate
            for debate in search.reference.debates.select_related(
                "run__criterion", "prompt", "response_a", "response_b"
            )
            if _item(debate) in people
        ]
        out = {}
        for candidate in chunk.unit_ids:
            judge = candidate_definition(search.version, search.candidates[candidate])
            verdicts = _ask(judge, search.reference, debates)
            judged = [(debate, verdict) for debate, verdict in verdicts.items() if verdict is not None]
            agreed = sum(_canonical(debate, verdict) == people[_item(debate)] for debate, verdict in judged)
            out[candidate] = (agreed, len(judged))
        return out

    def write(self, chunk: JobChunk, result: dict[int, tuple[int, int]]) -> int:
        CandidateScore.objects.bulk_create(
            [
                CandidateScore(search=self.run, candidate=candidate, agreed=agreed, judged=judged)
                for candidate, (agreed, judged) in result.items()
            ],
            ignore_conflicts=True,  # a chunk delivered twice scores its candidate once
        )
        return sum(judged == 0 for _, judged in result.values())

    def finish(self, job: Job) -> Settled:
        search = self.run
        scores = {score.candidate: score for score in search.scores.all()}
        scored = [(score.accuracy, -candidate) for candidate, score in scores.items() if score.judged]
        outcome = Outcome(planned=len(search.candidates), produced=len(scored), failed=len(scores) - len(scored))
        if not scored:
            return Settled("No candidate gave a verdict on the train pairs.", {}, outcome)
        _, best = max(scored)
        best = -best
        lines = [
            f"candidate {candidate + 1} ({_described(search.candidates[candidate])}): "
            f"{score.agreed}/{score.judged} train pairs agreed"
            for candidate, score in sorted(scores.items())
        ]
        summary = {"scores": {str(c): [s.agreed, s.judged] for c, s in scores.items()}, "best": best}
        definition = candidate_definition(search.version, search.candidates[best])
        try:
            made = do_derive_version(
                search.version,
                definition,
                method=Method.SETTINGS,
                split=search.split,
                note=f"Settings chosen on train pairs: {'; '.join(lines)}. Kept candidate {best + 1}.",
            )
        except VersionRejected:
            kept = f"{search.version}'s own settings scored best; no new version. "
            return Settled(kept + "; ".join(lines), summary, outcome)
        search.made = made
        search.save(update_fields=["made"])
        message = f"{made} made with candidate {best + 1}. " + "; ".join(lines)
        return Settled(message, summary | {"made": str(made)}, outcome)


def _item(debate: Debate) -> tuple[str, int, int]:
    low, high = sorted((debate.response_a_id, debate.response_b_id))
    return (debate.run.criterion.slug, low, high)


def _canonical(debate: Debate, verdict: int) -> int:
    """A verdict in the order shown → the pair's order (its lower response id first)."""
    first, _ = debate.shown
    if verdict not in (FIRST, SECOND) or first.pk == min(debate.response_a_id, debate.response_b_id):
        return verdict
    return SECOND if verdict == FIRST else FIRST


def _described(candidate: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in candidate.items()) or "the version's own settings"


def _ask(judge: JudgeDefinition, reference: DebateRun, debates: list[Debate]) -> dict[Debate, int | None]:
    """Each debate's verdict from the candidate (the majority of its samples), in the order shown."""
    run = JudgeRun(  # unsaved: the prompt a run with these settings would ask
        reference=reference,
        judge=judge.spec,
        criteria_variant=judge.criteria_variant,
        privileged_sources=list(judge.privileged_sources),
        samples=judge.samples,
        scale=judge.scale,
        temperature=judge.temperature,
        instructions=judge.instructions,
        examples=[asdict(example) for example in judge.examples],
    )
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
