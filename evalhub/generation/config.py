"""A generation run's configuration (the privileged-information paper's hint tiers, section 3): one
frozen value, checked here, stored once as the GenerationRun's columns and relations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.privileged.answers import MatchMode
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.generation.models import PromptTemplate
from evalhub.jobs.config import RunConfig
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider

GENERATION = "generation"  # the job kind
MAX_HINTS = 10


def spec_of(model: LanguageModel) -> str:
    """The provider spec a candidate model is called with."""
    return f"{model.provider}:{model.model_id}" if model.model_id else model.provider


@dataclass(frozen=True)
class GenerationConfig(RunConfig):
    spec_fields = ("hint_maker",)
    benchmark: Benchmark
    candidates: Sequence[LanguageModel]  # empty, with hint tiers: make the hints only
    template: PromptTemplate
    tiers: Sequence[int] = (0,)  # hint tiers: 0 = no hint, k = the first k hints
    hint_count: int = 3
    hint_maker: str = ""  # a chat provider spec, or the rule-based maker
    samples: int = 1
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int = 0
    answer_match: str = MatchMode.SYMBOLIC
    anchor: LanguageModel | None = None  # the candidate whose tier-0 responses the others are compared with
    prompt_ids: Sequence[int] = ()  # a subset of the benchmark's prompts; empty: all

    relations: ClassVar[dict[str, str]] = {"candidates": "candidates"}

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "tiers", tuple(sorted({int(t) for t in self.tiers})))
        object.__setattr__(self, "answer_match", str(self.answer_match))

    def errors(self) -> list[str]:
        errors = []
        if not self.candidates and not (self.hint_maker and any(t > 0 for t in self.tiers)):
            errors.append("Choose the candidate models (or hint tiers and a hint maker, to make the hints only).")
        for model in self.candidates:
            if model.is_human or not model.provider:
                errors.append(f"{model.display_name} has no provider: it cannot be asked to generate.")
                continue
            try:
                provider = parse_spec(spec_of(model)).provider
            except UnknownProvider as error:
                errors.append(f"{model.display_name}: {error}")
                continue
            if provider == "heuristic":
                errors.append(f"{model.display_name} is the heuristic judge: it judges, it writes no responses.")
        if not self.tiers or any(t < 0 for t in self.tiers):
            errors.append("Choose the hint tiers, e.g. 0 (no hint) or 0, 1, 2, 3.")
        if not 1 <= self.hint_count <= MAX_HINTS:
            errors.append(f"The number of hints must be between 1 and {MAX_HINTS}.")
        elif self.tiers and max(self.tiers) > self.hint_count:
            errors.append(
                f"Tier {max(self.tiers)} needs {max(self.tiers)} hints, but {self.hint_count} are made per prompt."
            )
        if any(t > 0 for t in self.tiers):
            if not self.hint_maker:
                errors.append(f"Hint tiers need a hint maker: a chat provider spec, or {RULE_BASED} (rule-based).")
            elif self.hint_maker != RULE_BASED:
                try:
                    parse_spec(self.hint_maker)
                except UnknownProvider as error:
                    errors.append(f"Hint maker: {error}")
        if not 1 <= self.samples <= 32:
            errors.append("Samples per prompt must be between 1 and 32.")
        if self.answer_match not in {m.value for m in MatchMode}:
            errors.append(f"Answer matching is one of {', '.join(m.value for m in MatchMode)}.")
        if self.anchor is not None and self.candidates and self.anchor not in self.candidates:
            errors.append("The anchor model must be one of the candidates (win rates compare responses at one tier).")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark.slug,
            "prompts": len(self.prompt_ids) or "all",
            "candidates": sorted(m.slug for m in self.candidates),
            "template": self.template.slug,
            "tiers": list(self.tiers),
            "hint_count": self.hint_count,
            "hint_maker": self.hint_maker,
            "samples": self.samples,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "answer_match": self.answer_match,
            "anchor": self.anchor.slug if self.anchor else "",
        }
