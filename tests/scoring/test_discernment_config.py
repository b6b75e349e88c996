"""A DHP or YESciEval run's configuration refuses, with a sentence a user can act on, each case it must."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.scoring.discernment.config import DiscernmentConfig

TARGETS = (LanguageModel(slug="writer", display_name="Writer"),)


def config(**changes) -> DiscernmentConfig:
    fields = {
        "benchmark": Benchmark(slug="news", name="News"),
        "family": "dhp",
        "task": "dhp-summarization",
        "targets": TARGETS,
        "perturbations": (("random_typos", "minor"),),
        "metrics": ("coherence",),
        "judges": ("heuristic",),
    }
    return DiscernmentConfig(**{**fields, **changes})


def test_a_complete_configuration_has_no_errors():
    assert config().errors() == []
    yescieval = {"family": "yescieval", "task": "yescieval", "metrics": ("relevancy",)}
    assert config(**yescieval, perturbations=(("relevancy_subtle", "subtle"),)).errors() == []
    assert config(perturbations=(("grammatical_errors", "major"),), perturbation_lm="heuristic").errors() == []
    assert config(weights={"random_typos": {"coherence": 1.0}}, weights_source="survey").errors() == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"family": "other"}, "Choose DHP or YESciEval"),
        ({"task": "dhp-poetry"}, "Choose a DHP task among"),
        ({"metrics": ("wit",)}, "has metrics coherence"),
        ({"family": "yescieval", "task": "yescieval", "metrics": ("wit",)}, "Unknown rubrics wit"),
        (
            {"family": "yescieval", "task": "yescieval", "metrics": ("relevancy",), "mode": "probability"},
            "answer in JSON",
        ),
        ({"metrics": ()}, "Choose at least one metric"),
        ({"perturbations": ()}, "Choose at least one perturbation"),
        ({"perturbations": (("random_typos", "extreme"),)}, "Unknown perturbation random_typos (extreme)"),
        ({"perturbations": (("relevancy_subtle", "subtle"),)}, "belongs to yescieval, not dhp"),
        ({"perturbations": (("grammatical_errors", "major"),)}, "name the perturbation LLM"),
        ({"judges": ()}, "Name at least one judge"),
        ({"judges": ("nonsense:x",)}, "Judge 'nonsense:x': unknown provider"),
        ({"mode": "probability"}, "next-token probabilities need a local transformers model"),
        ({"perturbation_lm": "nonsense:x"}, "Perturbation LLM: unknown provider"),
        ({"repeats": 21}, "Repeats must be between 1 and 20"),
        ({"targets": ()}, "Choose the models whose responses are judged"),
        ({"weights": {"random_typos": {"coherence": -1.0}}}, "Expert weights:"),
    ],
    ids=lambda value: str(value),
)
def test_each_incomplete_configuration_is_refused_with_its_reason(changes, said):
    errors = config(**changes).errors()
    assert any(said in error for error in errors), errors
