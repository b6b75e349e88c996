"""A DHP or YESciEval run's configuration (DHP, section 3; YESciEval, section 4): one frozen value,
checked here, stored once as the DiscernmentRun's columns and relations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.dhp.expert_weights import check_weights
from evalhub.core.dhp.perturbations import REGISTRY
from evalhub.core.prompts.judges import TASKS, metric_of
from evalhub.core.yescieval import rubrics
from evalhub.jobs.config import RunConfig
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider, redact
from evalhub.scoring.models import DiscernmentFamily, ScoringMode

DISCERNMENT = "discernment"  # the job kind


@dataclass(frozen=True)
class DiscernmentConfig(RunConfig):
    spec_fields = ("judges", "perturbation_lm")
    benchmark: Benchmark
    family: str  # DiscernmentFamily
    task: str  # a survey template key: dhp-summarization, …, or yescieval
    targets: Sequence[LanguageModel]  # whose responses are perturbed and judged
    perturbations: Sequence[Sequence[str]]  # (name, severity) pairs
    metrics: Sequence[str]
    judges: Sequence[str]  # provider specs
    repeats: int = 5
    mode: str = ScoringMode.GENERATE
    temperature: float = 0.0
    perturbation_lm: str = ""
    shape: str = "default"  # the dataset shape for DHP's k (Table 2)
    weights: dict[str, Any] | None = None  # expert weights {perturbation: {metric: w}}; None: uniform
    weights_source: str = ""
    target_variant: str = ""
    seed: int = 0
    domain: str = ""  # YESciEval: a domain whose vocabulary and examples the package injects (nlp, ecology)

    relations: ClassVar[dict[str, str]] = {"targets": "target_models"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode == ScoringMode.PROBABILITY:  # one forward pass reads the distribution: nothing to repeat
            object.__setattr__(self, "repeats", 1)

    def errors(self) -> list[str]:
        errors = []
        if self.family == DiscernmentFamily.DHP:
            if self.task not in TASKS:
                errors.append(f"Choose a DHP task among {', '.join(TASKS)}.")
            else:
                for metric in self.metrics:
                    try:
                        metric_of(self.task, metric)
                    except ValueError as error:
                        errors.append(str(error))
        elif self.family == DiscernmentFamily.YESCIEVAL:
            known = rubrics.rubrics()[rubrics.POINTWISE]
            unknown = [m for m in self.metrics if m not in known]
            if unknown:
                errors.append(f"Unknown rubrics {', '.join(unknown)}; YESciEval's are {', '.join(known)}.")
            if self.domain and self.domain not in rubrics.domains():
                errors.append(f"Unknown domain {self.domain!r}; YESciEval's are {', '.join(rubrics.domains())}.")
            if self.mode == ScoringMode.PROBABILITY:
                errors.append("YESciEval judges answer in JSON: use generation, not next-token probabilities.")
        else:
            errors.append("Choose DHP or YESciEval.")
        if self.domain and self.family != DiscernmentFamily.YESCIEVAL:
            errors.append("A domain's vocabulary is YESciEval's: DHP runs take none.")
        if not self.metrics:
            errors.append("Choose at least one metric.")
        if not self.perturbations:
            errors.append("Choose at least one perturbation.")
        for name, severity in self.perturbations:
            perturbation = REGISTRY.get(name)
            if perturbation is None or severity not in perturbation.severities:
                errors.append(f"Unknown perturbation {name} ({severity}).")
            elif perturbation.family != self.family:
                errors.append(f"{perturbation.label} belongs to {perturbation.family}, not {self.family}.")
            elif perturbation.llm and not self.perturbation_lm:
                errors.append(f"{perturbation.label} is made by an LLM: name the perturbation LLM.")
        if not self.judges:
            errors.append("Name at least one judge.")
        for judge in self.judges:
            try:
                provider = parse_spec(judge).provider
            except UnknownProvider as error:
                errors.append(f"Judge {redact(judge)!r}: {error}")
                continue
            if self.mode == ScoringMode.PROBABILITY and provider != "transformers":
                errors.append(f"Judge {redact(judge)!r}: next-token probabilities need a local transformers model.")
        if self.perturbation_lm:
            try:
                parse_spec(self.perturbation_lm)
            except UnknownProvider as error:
                errors.append(f"Perturbation LLM: {error}")
        if not 1 <= self.repeats <= 20:
            errors.append("Repeats must be between 1 and 20.")
        if not self.targets:
            errors.append("Choose the models whose responses are judged.")
        if self.weights is not None:
            try:
                check_weights(self.weights)
            except ValueError as error:
                errors.append(f"Expert weights: {error}")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark.slug,
            "family": self.family,
            "task": self.task,
            "targets": sorted(m.slug for m in self.targets),
            "perturbations": [f"{name} ({severity})" for name, severity in self.perturbations],
            "metrics": list(self.metrics),
            "judges": list(self.judges),
            "repeats": self.repeats,
            "mode": self.mode,
            "temperature": self.temperature,
            "perturbation_lm": self.perturbation_lm,
            "shape": self.shape,
            "weights": self.weights_source or "uniform",
            "target_variant": self.target_variant or "all",
            "seed": self.seed,
            **({"domain": self.domain} if self.domain else {}),
        }
