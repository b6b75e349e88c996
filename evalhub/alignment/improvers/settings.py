"""Choice of settings: a version's criteria variant, privileged sources and samples per pair, chosen by
agreement with people on the split's train pairs. A job: each candidate is a unit, asked about every
train pair of a debate run (with the engine's pause, resume and cancel); when the last is scored, the
best candidate becomes the next version, or the version keeps its own settings when they scored best.
Held-out labels are never read: the pairs and people's verdicts come from the training set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evalhub.alignment.actions import VersionRejected
from evalhub.alignment.improvers.base import ImproverRunner
from evalhub.alignment.improvers.train_scoring import OnTrainPairs, train_agreement
from evalhub.alignment.models import CandidateScore, JudgeVersion, Method, SettingsSearch
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.core.prompts.criteria_variants import ORIGINAL, VARIANTS
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import Plan

SETTINGS_SEARCH = "settings_search"
SETTINGS = ("criteria_variant", "privileged_sources", "samples")
MOST_CANDIDATES = 12
FIRST, SECOND = 1, 2


@dataclass(frozen=True)
class SettingsSearchConfig(OnTrainPairs):
    candidates: Sequence[Mapping[str, Any]] = ()  # each: some of SETTINGS

    def errors(self) -> list[str]:
        errors = self.split_errors()
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
        return errors

    def shown(self) -> dict[str, Any]:
        return self.shown_on() | {"candidates": [dict(candidate) for candidate in self.candidates]}


def candidate_definition(version: JudgeVersion, candidate: Mapping[str, Any]) -> JudgeDefinition:
    settings = dict(candidate)
    if "privileged_sources" in settings:
        settings["privileged_sources"] = tuple(sorted(settings["privileged_sources"]))
    return replace(version.judge, **settings)


class SettingsSearchRunner(ImproverRunner[SettingsSearch, dict[int, tuple[int, int]]]):
    kind = SETTINGS_SEARCH
    method = Method.SETTINGS
    model = SettingsSearch
    related = ("reference__criterion",)
    config = SettingsSearchConfig

    @classmethod
    def plan(cls, config: SettingsSearchConfig, run: SettingsSearch | None, size: int | None) -> Plan:
        title = f"Settings for {config.version} on {config.split.benchmark.slug}'s train pairs"
        return Plan(title, list(range(len(config.candidates))), 1)

    def work(self, chunk: JobChunk) -> dict[int, tuple[int, int]]:
        """Per candidate of the chunk: (agreed, judged) with people on the train pairs."""
        search = self.run
        pairs = self.train_pairs(search.reference.criterion.slug)
        return {
            candidate: train_agreement(
                candidate_definition(search.version, search.candidates[candidate]), search.reference, pairs
            )
            for candidate in chunk.unit_ids
        }

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
            made = self.make_version(
                definition, f"Settings chosen on train pairs: {'; '.join(lines)}. Kept candidate {best + 1}."
            )
        except VersionRejected:
            kept = f"{search.version}'s own settings scored best; no new version. " + "; ".join(lines)
            return Settled(kept, summary, outcome)
        top = scores[best]
        agreed = f"{top.agreed}/{top.judged} train pairs agreed"
        message = f"{made} made with candidate {best + 1} ({agreed}); its note lists every candidate."
        return Settled(message, summary | {"made": str(made)}, outcome)


def _described(candidate: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in candidate.items()) or "the version's own settings"
