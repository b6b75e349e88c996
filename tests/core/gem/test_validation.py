"""GEM's degradations and manipulations (Appendix D) on the paper's own toy examples."""

from __future__ import annotations

import random

import pytest

from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.gem.validation import ELONGATION, delete_every_other_sentence, derive, split_sections

# GEM, Appendix D.3.1 "Before Deletion".
TOY = """Summary Of The Paper:
This is the first sentence. This is the second sentence. This is the third sentence.
Strengths And Weaknesses:
This is the first sentence. This is the second sentence. This is the third sentence. This is the fourth sentence.
Clarity, Quality, Novelty And Reproducibility:
This is the first sentence.
Summary Of The Review:
This is the first sentence. This is the second sentence."""


def test_sentence_deletion_keeps_odd_sentences_per_section_as_in_appendix_d31():
    out, deleted = delete_every_other_sentence(TOY)
    assert out == (
        "Summary Of The Paper:\nThis is the first sentence. This is the third sentence.\n"
        "Strengths And Weaknesses:\nThis is the first sentence. This is the third sentence.\n"
        "Clarity, Quality, Novelty And Reproducibility:\nThis is the first sentence.\n"
        "Summary Of The Review:\nThis is the first sentence."
    )
    assert deleted == 4


def test_deletion_for_completion_marks_each_gap_as_in_appendix_d32():
    out, _ = delete_every_other_sentence(TOY, gem_prompts.MISSING_SENTENCE)
    assert "This is the first sentence. [There is one missing sentence] This is the third sentence." in out
    assert out.endswith("Summary Of The Review:\nThis is the first sentence. [There is one missing sentence]")


def test_sentences_end_at_line_breaks_and_lists_stay_lists():
    out, deleted = delete_every_other_sentence("- one\n- two\n- three\n- four")
    assert out == "- one\n- three"
    assert deleted == 2


def test_a_review_without_headings_is_one_section():
    assert [s.heading for s in split_sections("A. B. C.")] == [None]
    assert delete_every_other_sentence("A first. A second! A third?")[0] == "A first. A third?"


def test_meaningless_elongation_adds_the_fixed_sentences_to_every_section():
    answers = iter(["clear writing and strong results", "missing ablations and small data"])
    derived = derive("meaningless_elongation", TOY, complete=lambda messages: next(answers))
    assert derived.text is not None
    assert derived.params["sections_elongated"] == 4
    assert "This paper has several notable strengths, including clear writing and strong results." in derived.text
    assert "such as missing ablations and small data. Specifically" in derived.text
    assert ELONGATION["summary of the paper"] + "This is the first sentence." in derived.text
    # Nothing of the original is lost.
    for line in TOY.splitlines():
        assert line in derived.text


def test_random_replacement_is_seeded_and_leaves_the_global_rng_alone():
    random.seed(123)
    expected_next = random.random()
    random.seed(123)
    first = derive("random_replacement", "mine", others=["o1", "o2", "o3", "o4"], seed=9)
    assert random.random() == expected_next, "the global RNG was not touched"
    again = derive("random_replacement", "mine", others=["o1", "o2", "o3", "o4"], seed=9)
    assert first == again
    assert first.text in {"o1", "o2", "o3", "o4"}


def test_a_strategy_that_changes_nothing_yields_no_text_and_says_why():
    derived = derive("sentence_deletion", "Only one sentence.")
    assert derived.text is None
    assert "unchanged" in derived.note
    assert derive("llm_rephrase", "x", complete=lambda m: "x").text is None


def test_llm_strategies_without_an_llm_or_an_abstract_say_what_is_missing():
    assert "needs an LLM" in derive("llm_rephrase", TOY).note
    assert "abstract" in derive("abstract_only", TOY, complete=lambda m: "review").note
    with pytest.raises(ValueError, match="unknown validation strategy"):
        derive("shuffle", TOY)


def test_llm_strategies_send_the_papers_prompts():
    seen = []
    derive("llm_rephrase", TOY, complete=lambda m: seen.append(m) or "Rephrased.")
    derive("abstract_only", TOY, abstract="An abstract.", complete=lambda m: seen.append(m) or "A review.")
    assert seen[0] == gem_prompts.chat(gem_prompts.REPHRASE_SYSTEM, TOY)
    assert seen[1] == gem_prompts.chat(gem_prompts.ABSTRACT_ONLY_SYSTEM, "An abstract.")


def test_a_strategy_declared_without_its_derivation_cannot_be_made():
    """Strategies were branches of an if-chain whose last branch (meaningless elongation) ran for any
    declared strategy without one of its own; now each is declared with what derives it."""
    from evalhub.core.gem.validation import Strategy

    with pytest.raises(TypeError, match="derive"):
        Strategy("paraphrase_twice", "Paraphrase twice", "manipulation", True, "D.9")  # type: ignore[call-arg]


def test_each_strategy_runs_its_own_derivation():
    from evalhub.core.gem.validation import STRATEGIES

    derivations = [strategy.derive for strategy in STRATEGIES.values()]
    assert len(set(derivations)) == len(derivations)
    assert all(strategy.derive.__name__ == f"_{name}" for name, strategy in STRATEGIES.items())
