"""A GEM run's configuration refuses, with a sentence a user can act on, each case it must: the glue
between the run form and the runner, which no run reaches when it is refused."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.scoring.gem.config import GemConfig

HUMANS = (LanguageModel(slug="reviewer-1", display_name="Reviewer 1"),)
CANDIDATES = (LanguageModel(slug="model-a", display_name="Model A"),)


def config(**changes) -> GemConfig:
    fields = {
        "benchmark": Benchmark(slug="reviews", name="Reviews"),
        "candidates": CANDIDATES,
        "references": HUMANS,
        "variants": ("gem",),
        "evaluation_lm": "transformers:/models/tiny",
    }
    return GemConfig(**{**fields, **changes})


def test_a_complete_configuration_has_no_errors():
    assert config().errors() == []
    assert config(validation_strategies=("sentence_deletion",)).errors() == []
    assert config(validation_strategies=("llm_rephrase",), validation_lm="heuristic").errors() == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"references": ()}, "Choose at least one reference model"),
        ({"references": (), "candidates": ()}, "Choose the candidates to score"),
        ({"variants": ()}, "Choose variants among"),
        ({"variants": ("gem", "gem-x")}, "Choose variants among"),
        ({"evaluation_lm": ""}, "Name the evaluation LM"),
        ({"evaluation_lm": "anthropic:claude"}, "Evaluation LM: log-probabilities need one of"),
        ({"evaluation_lm": "nonsense:x"}, "Evaluation LM: unknown provider"),
        ({"preprocessing_lm": "nonsense:x"}, "Preprocessing LM: unknown provider"),
        ({"validation_strategies": ("shuffle-everything",)}, "Unknown validation strategies: shuffle-everything"),
        ({"examiner_lm": "heuristic"}, "The LMExaminer baseline is part of the validation table"),
        ({"validation_strategies": ("llm_rephrase",)}, "need a validation LM"),
    ],
    ids=lambda value: str(value),
)
def test_each_incomplete_configuration_is_refused_with_its_reason(changes, said):
    errors = config(**changes).errors()
    assert any(said in error for error in errors), errors
