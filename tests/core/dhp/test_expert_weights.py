"""Expert weights from survey answers, by hand."""

from __future__ import annotations

import pytest

from evalhub.core.dhp.expert_weights import check_weights, expert_weights
from evalhub.core.prompts.surveys import TEMPLATES


def test_weights_are_the_share_of_experts_choosing_each_metric():
    answers = [("typos", "fluency")] * 3 + [("typos", "coherence")] + [("reorder", "coherence")] * 2
    result = expert_weights(answers, ["typos", "reorder", "fictional"], ["coherence", "fluency"])
    assert result.weights["typos"] == {"coherence": 0.25, "fluency": 0.75}
    assert result.weights["reorder"] == {"coherence": 1.0, "fluency": 0.0}
    assert result.weights["fictional"] == {"coherence": 0.5, "fluency": 0.5}
    assert result.uniform == ["fictional"]
    assert result.counts["typos"] == {"coherence": 1, "fluency": 3}
    assert check_weights(result.weights) == result.weights


def test_answers_naming_unknown_issues_or_metrics_are_ignored():
    result = expert_weights([("typos", "taste"), ("nope", "fluency")], ["typos"], ["fluency"])
    assert result.uniform == ["typos"]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({}, "non-empty"),
        ({"p": {"m": 0, "n": 0}}, "sum to 0"),
        ({"p": {"m": -1, "n": 2}}, "≥ 0"),
        ({"p": {"m": "1"}}, "number"),
        ({"p": []}, "object"),
        ([1], "non-empty object"),
    ],
)
def test_a_bad_weights_document_names_its_problem(data, problem):
    with pytest.raises(ValueError, match=problem):
        check_weights(data)


def test_every_shipped_template_has_unique_keys_and_text():
    assert set(TEMPLATES) == {
        "dhp-summarization",
        "dhp-story-completion",
        "dhp-question-answering",
        "dhp-translation",
        "yescieval",
    }
    for template in TEMPLATES.values():
        for kind in ("metrics", "issues"):
            keys = [entry["key"] for entry in template[kind]]
            assert len(keys) == len(set(keys))
            assert all(keys)
        assert all(m["definition"] for m in template["metrics"])
        assert all(i["description"] for i in template["issues"])
    assert len(TEMPLATES["yescieval"]["metrics"]) == 9
    assert len(TEMPLATES["yescieval"]["issues"]) == 18 + 10  # B.3's, then evalhub's on the later families
