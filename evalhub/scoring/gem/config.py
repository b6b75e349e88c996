"""A GEM run's configuration (GEM, section 3 and Appendix C): one frozen value, checked here, stored
once as the GemRun's columns and relations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.gem.validation import STRATEGIES
from evalhub.jobs.config import RunConfig
from evalhub.llm.registry import SCORERS, parse_spec
from evalhub.llm.types import UnknownProvider
from evalhub.scoring.models import GemVariant

GEM = "gem"  # the job kind


@dataclass(frozen=True)
class GemConfig(RunConfig):
    spec_fields = ("evaluation_lm", "preprocessing_lm", "validation_lm", "examiner_lm")
    benchmark: Benchmark
    candidates: Sequence[LanguageModel]
    references: Sequence[LanguageModel]
    variants: Sequence[str]
    evaluation_lm: str
    preprocessing_lm: str = ""
    validation_strategies: Sequence[str] = ()
    validation_lm: str = ""
    examiner_lm: str = ""
    dtype: str = "auto"
    device: str = ""
    prompt_ids: Sequence[int] = ()  # a subset of the benchmark's prompts; empty: all
    seed: int = 0
    bootstrap: bool = False
    use_imported_preprocessing: bool = True
    candidate_variant: str = ""

    relations: ClassVar[dict[str, str]] = {
        "candidates": "candidate_models",
        "references": "reference_models",
    }

    def errors(self) -> list[str]:
        errors = []
        if not self.references:
            errors.append("Choose at least one reference model (e.g. the human reviewers).")
        if not self.candidates and not self.references:
            errors.append("Choose the candidates to score.")
        unknown = [v for v in self.variants if v not in GemVariant.values]
        if unknown or not self.variants:
            errors.append(f"Choose variants among: {', '.join(GemVariant.values)}.")
        for label, spec, kind in (
            ("Evaluation LM", self.evaluation_lm, "scorer"),
            ("Preprocessing LM", self.preprocessing_lm, "chat"),
            ("Validation LM", self.validation_lm, "chat"),
            ("LMExaminer LM", self.examiner_lm, "chat"),
        ):
            if not spec:
                continue
            try:
                parsed = parse_spec(spec)
            except UnknownProvider as error:
                errors.append(f"{label}: {error}")
                continue
            if kind == "scorer" and parsed.provider not in SCORERS:
                errors.append(f"{label}: log-probabilities need one of {', '.join(SCORERS)}, not {parsed.provider!r}.")
        if not self.evaluation_lm:
            errors.append("Name the evaluation LM, e.g. transformers:/models/llama-3.1-8b-instruct.")
        bad = [s for s in self.validation_strategies if s not in STRATEGIES]
        if bad:
            errors.append(f"Unknown validation strategies: {', '.join(bad)}.")
        if self.examiner_lm and not self.validation_strategies:
            errors.append("The LMExaminer baseline is part of the validation table: choose validation strategies too.")
        if (
            any(STRATEGIES[s].needs_llm for s in self.validation_strategies if s in STRATEGIES)
            and not self.validation_lm
        ):
            errors.append("The chosen validation strategies need a validation LM (a chat provider).")
        return errors

    def shown(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark.slug,
            "prompts": len(self.prompt_ids) or "all",
            "candidates": sorted(m.slug for m in self.candidates),
            "references": sorted(m.slug for m in self.references),
            "variants": list(self.variants),
            "evaluation_lm": self.evaluation_lm,
            "dtype": self.dtype,
            "preprocessing_lm": self.preprocessing_lm,
            "validation_strategies": list(self.validation_strategies),
            "validation_lm": self.validation_lm,
            "examiner_lm": self.examiner_lm,
            "candidate_variant": self.candidate_variant or "all",
            "seed": self.seed,
        }
