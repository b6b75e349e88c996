"""A generation run's configuration refuses, with a sentence a user can act on, each case it must."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.generation.config import GenerationConfig
from evalhub.generation.models import PromptTemplate

WRITER = LanguageModel(slug="writer", display_name="Writer", provider="openai", model_id="gpt-4o-mini")
OTHER = LanguageModel(slug="other", display_name="Other", provider="openai", model_id="gpt-4.1")


def config(**changes) -> GenerationConfig:
    fields = {
        "benchmark": Benchmark(slug="maths", name="Maths"),
        "candidates": (WRITER,),
        "template": PromptTemplate(slug="answer", name="Answer", user="{prompt}"),
    }
    return GenerationConfig(**{**fields, **changes})


def test_a_complete_configuration_has_no_errors():
    assert config().errors() == []
    assert config(tiers=(0, 1, 2), hint_maker=RULE_BASED, anchor=WRITER).errors() == []
    assert config(candidates=(), tiers=(1,), hint_maker="heuristic").errors() == []  # hints only


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"candidates": ()}, "Choose the candidate models"),
        ({"candidates": (LanguageModel(slug="people", display_name="People", is_human=True),)}, "has no provider"),
        ({"candidates": (LanguageModel(slug="x", display_name="X", provider="nonsense"),)}, "unknown provider"),
        ({"candidates": (LanguageModel(slug="h", display_name="H", provider="heuristic"),)}, "it writes no responses"),
        ({"tiers": ()}, "Choose the hint tiers"),
        ({"tiers": (-1,)}, "Choose the hint tiers"),
        ({"hint_count": 0}, "The number of hints must be between 1 and"),
        ({"tiers": (0, 4), "hint_maker": RULE_BASED}, "Tier 4 needs 4 hints"),
        ({"tiers": (0, 1)}, "Hint tiers need a hint maker"),
        ({"tiers": (0, 1), "hint_maker": "nonsense:x"}, "Hint maker: unknown provider"),
        ({"samples": 0}, "Samples per prompt must be between 1 and 32"),
        ({"answer_match": "fuzzy"}, "Answer matching is one of"),
        ({"anchor": OTHER}, "The anchor model must be one of the candidates"),
    ],
    ids=lambda value: str(value),
)
def test_each_incomplete_configuration_is_refused_with_its_reason(changes, said):
    errors = config(**changes).errors()
    assert any(said in error for error in errors), errors
