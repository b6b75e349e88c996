"""Debate runs' and single-judge runs' configurations (ScaleEval, Sections 3 and 5): one frozen value
each, checked here, stored once as the run's columns, listed on the job page from the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalhub.catalog.models import Benchmark, Criterion, LabelSplit, LanguageModel
from evalhub.core.prompts.criteria_variants import ORIGINAL, VARIANTS
from evalhub.core.scaleeval.aids import AIDS
from evalhub.core.scaleeval.debate import ALL_ROUNDS, LAST_ROUND, MAJORITY, UNANIMOUS
from evalhub.debates.models import BLIND_FIRST, FLOWS, GRADED, RUBRIC, DebateRun, JudgeRun
from evalhub.jobs.config import RunConfig
from evalhub.llm.capabilities import gives_logprobs

DEBATE = "debate"  # the job kinds
JUDGE_RUN = "judge_run"

TIE_POLICIES = ("another", "admin")
MAX_SAMPLES = 15


def probabilities_error(judge: str, probabilities: bool, scale: str) -> str:
    """Why a judge's verdict probabilities cannot be read, or "" (the form shows it beside the box)."""
    if not probabilities:
        return ""
    if judge and not gives_logprobs(judge):
        return (
            f"{judge} gives no token log-probabilities (reasoning models, Anthropic and the offline judges do not): "
            "untick this, and its probability is the vote share over its samples."
        )
    if scale in (GRADED, RUBRIC):
        return "Probabilities are read for the 1 / 2 / neither scale only."
    return ""


@dataclass(frozen=True)
class DebateConfig(RunConfig):
    spec_fields = ("agents",)
    name: str
    benchmark: Benchmark
    criterion: Criterion
    model_a: LanguageModel
    model_b: LanguageModel
    agents: Sequence[str]  # provider specs, one per agent
    category: str = ""  # only prompts of this category; blank: all
    variant: str = ""  # which responses of the two models ("" = imported ones)
    rounds: int = 3
    consensus_rule: str = UNANIMOUS
    history: str = ALL_ROUNDS
    privileged_sources: Sequence[str] = ()
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int = 0
    human_verdicts: int = 1
    tie_policy: str = "another"
    adjudication_flow: str = BLIND_FIRST
    aids: Sequence[str] = AIDS  # blind first: the aids items are assigned at random

    def errors(self) -> list[str]:
        # Specs are checked where people type them (the forms, the commands); tests and embedders may
        # register stand-in clients under names the provider registry does not know.
        errors = [] if self.agents else ["A debate needs at least one agent: name a provider spec per agent."]
        if self.model_a == self.model_b:
            errors.append("Model B must differ from model A.")
        if self.rounds < 1:
            errors.append("A debate has at least one round (round 0, the agents' independent verdicts).")
        if self.consensus_rule not in (UNANIMOUS, MAJORITY):
            errors.append(f"The consensus rule is {UNANIMOUS} or {MAJORITY}.")
        if self.history not in (ALL_ROUNDS, LAST_ROUND):
            errors.append(f"Agents see {ALL_ROUNDS} or {LAST_ROUND} of the discussion.")
        if self.human_verdicts < 1:
            errors.append("Unresolved debates need at least one person's verdict.")
        if self.tie_policy not in TIE_POLICIES:
            errors.append(f"The tie policy is one of {', '.join(TIE_POLICIES)}.")
        if self.adjudication_flow not in dict(FLOWS):
            errors.append(f"The adjudication flow is one of {', '.join(dict(FLOWS))}.")
        if self.adjudication_flow == BLIND_FIRST and not self.aids:
            errors.append("A blind-first run needs at least one aid to assign (none, the control, is one).")
        if unknown := sorted(set(self.aids) - set(AIDS)):
            errors.append(f"Unknown aid(s) {', '.join(unknown)}: choose from {', '.join(AIDS)}.")
        if len(set(self.aids)) != len(self.aids):
            errors.append("Name each aid once.")
        if self.max_tokens < 1:
            errors.append("Max tokens must be at least 1.")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "benchmark": self.benchmark.slug,
            "criterion": self.criterion.name,
            "model_a": self.model_a.slug,
            "model_b": self.model_b.slug,
            "category": self.category or "all",
            "variant": self.variant or "imported",
            "agents": list(self.agents),
            "rounds": self.rounds,
            "consensus_rule": self.consensus_rule,
            "history": self.history,
            "privileged_sources": list(self.privileged_sources),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "human_verdicts": self.human_verdicts,
            "tie_policy": self.tie_policy,
            "adjudication_flow": dict(FLOWS)[self.adjudication_flow]
            if self.adjudication_flow in dict(FLOWS)
            else self.adjudication_flow,
            "aids": list(self.aids) if self.adjudication_flow == BLIND_FIRST else "the debate, shown from the start",
        }


@dataclass(frozen=True)
class JudgeRunConfig(RunConfig):
    spec_fields = ("judge",)
    reference: DebateRun  # the debate run whose pairs are judged, and whose outcomes are the reference
    judge: str  # provider spec
    criteria_variant: str = ORIGINAL
    privileged_sources: Sequence[str] = ()
    samples: int = 1
    scale: str = "choice"
    check_position: bool = True
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int = 0
    probabilities: bool = False
    label: str = ""  # a judge version's name in reports (evalhub.alignment); blank: the spec
    instructions: str = ""
    examples: Sequence[Mapping[str, Any]] = ()  # WorkedExample fields, asked before each pair
    held_out_of: LabelSplit | None = None  # an improved judge: the split whose held-out pairs score it
    rubric: str = ""  # scale "rubric": the YESciEval pairwise rubric the judge rates each answer under
    domain: str = ""  # with a rubric: the domain whose vocabulary and examples the package injects

    def errors(self) -> list[str]:
        errors = [] if self.judge.strip() else ["Name the judge's provider spec."]
        errors += self._rubric_errors()
        if self.examples and self.scale != "choice":
            errors.append("Worked examples are answered 1, 2 or 0: a graded judge takes none.")
        if self.criteria_variant != ORIGINAL and self.criteria_variant not in VARIANTS:
            errors.append(f"The criteria variant is {ORIGINAL} or one of {', '.join(VARIANTS)}.")
        if not 1 <= self.samples <= MAX_SAMPLES:
            errors.append(f"Samples per pair must be between 1 and {MAX_SAMPLES}.")
        if self.scale not in dict(JudgeRun.SCALES):
            errors.append(f"The scale is one of {', '.join(dict(JudgeRun.SCALES))}.")
        if self.max_tokens < 1:
            errors.append("Max tokens must be at least 1.")
        if not errors:
            errors += [e for e in [probabilities_error(self.judge, self.probabilities, self.scale)] if e]
        if self.reference.pk is None or not self.reference.debates.exists():
            errors.append(f"The debate run {self.reference.name!r} has no pairs to judge.")
        return errors

    def _rubric_errors(self) -> list[str]:
        from evalhub.core.yescieval.rubrics import PAIRWISE, domains, rubrics

        known = rubrics()[PAIRWISE]
        if self.scale != RUBRIC:
            return ["A YESciEval rubric and domain go with the rubric scale."] if self.rubric or self.domain else []
        errors = [] if self.rubric in known else [f"Choose a YESciEval pairwise rubric: {', '.join(known)}."]
        if self.domain and self.domain not in domains():
            errors.append(f"Unknown domain {self.domain!r}; YESciEval's are {', '.join(domains())}.")
        if self.examples or self.instructions:
            errors.append("A YESciEval rubric's prompt is the package's: it takes no instructions or worked examples.")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "reference": self.reference.name,
            "judge": self.judge,
            "criteria_variant": self.criteria_variant,
            "privileged_sources": list(self.privileged_sources),
            "samples": self.samples,
            "scale": self.scale,
            "check_position": self.check_position,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "probabilities": self.probabilities,
            **({"label": self.label} if self.label else {}),
            **({"rubric": self.rubric} if self.rubric else {}),
            **({"domain": self.domain} if self.domain else {}),
            **({"instructions": self.instructions} if self.instructions else {}),
            **({"examples": len(self.examples)} if self.examples else {}),
            **({"scored_on": f"{self.held_out_of.benchmark.slug}'s held-out pairs"} if self.held_out_of else {}),
        }
