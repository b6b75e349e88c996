"""DHP's hierarchical perturbations and YESciEval's adversarial variants: what each changes, seeded."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from evalhub.core.dhp.perturbations import (
    BLOG,
    EXTREME,
    MAJOR,
    MINOR,
    REGISTRY,
    SPORTS,
    SUBTLE,
    apply,
    k_for,
    split_sentences,
)

SUMMARY = (
    "However, the new model answers most questions correctly. It runs on a single GPU in Berlin. "
    "Therefore it is cheap to deploy. Moreover, the authors release the code. The results hold on 12 datasets."
)
CONTEXT = {
    "others": ["A different story ends here. The dog ran home.", "Another item. It ends in Paris."],
    "same_domain": ["Related work reports similar accuracy on smaller datasets."],
    "wrong_ending_sentence": "Then everyone flew to the moon.",
}


def echo_changed(messages):
    """A stand-in LLM: returns the text after the prompt's last 'Summary:' with one word changed."""
    text = messages[-1]["content"]
    if "Sentence:" in text:
        return "In other words, " + text.rsplit("Sentence:", 1)[1].strip()
    original = text.rsplit("Summary:\n\n", 1)[1].rsplit("\n\nRevised Summary:", 1)[0]
    return "Revised Summary: " + original.replace("Berlin", "Zyntara")


def test_the_paper_k_values_per_dataset_shape():
    assert (k_for("random_deletions", MINOR, "summeval"), k_for("random_deletions", MAJOR, "summeval")) == (10, 50)
    assert (k_for("random_typos", MINOR, "sumpubmed"), k_for("random_typos", MAJOR, "sumpubmed")) == (20, 100)
    assert (k_for("random_deletions", MINOR, "qa"), k_for("random_deletions", MAJOR, "qa")) == (5, 25)
    assert (k_for("random_word_deletions", MINOR), k_for("random_word_deletions", MAJOR)) == (5, 25)
    assert (k_for("reordering", MINOR), k_for("reordering", MAJOR)) == (2, None)


def test_character_deletion_removes_exactly_k_alphanumerics_and_nothing_else():
    result = apply("random_deletions", SUMMARY, severity=MINOR, seed=3, shape="summeval")
    assert len(SUMMARY) - len(result.text) == 10
    strip = re.compile(r"[A-Za-z0-9]")
    assert strip.sub("", result.text) == strip.sub("", SUMMARY), "punctuation and spaces untouched"
    assert result.params == {"severity": MINOR, "seed": 3, "k": 10, "deleted": 10}


def test_typos_are_reproducible_and_leave_the_global_rng_alone():
    random.seed(42)
    expected = [random.random() for _ in range(3)]
    random.seed(42)
    first = apply("random_typos", SUMMARY, severity=MAJOR, seed=7, shape="summeval")
    assert [random.random() for _ in range(3)] == expected, "typo's reseeding did not leak"
    again = apply("random_typos", SUMMARY, severity=MAJOR, seed=7, shape="summeval")
    other = apply("random_typos", SUMMARY, severity=MAJOR, seed=8, shape="summeval")
    assert first == again
    assert first.text != SUMMARY
    assert other.text != first.text
    assert len(first.params["kinds"]) == 50


def test_word_deletion_removes_k_continuous_words():
    result = apply("random_word_deletions", SUMMARY, severity=MINOR, seed=1)
    words, kept = SUMMARY.split(), result.text.split()
    start = result.params["start_word"]
    assert kept == words[:start] + words[start + 5 :]


@pytest.mark.parametrize("severity", [MINOR, MAJOR])
def test_reordering_keeps_every_sentence_and_changes_the_order(severity):
    result = apply("reordering", SUMMARY, severity=severity, seed=5)
    before, after = split_sentences(SUMMARY), split_sentences(result.text)
    assert Counter(before) == Counter(after)
    assert before != after
    moved = sum(a != b for a, b in zip(before, after, strict=True))
    assert moved == 2 if severity == MINOR else moved >= 2


def test_endings_and_answers_come_from_other_items_or_the_dataset():
    story = "Tom went out. He found a cat."
    ending = apply("random_ending_sentence", story, severity=MAJOR, seed=0, context=CONTEXT)
    assert ending.text.startswith("Tom went out.")
    assert ending.text.split(". ")[-1] in {
        "The dog ran home.",
        "It ends in Paris.",
    }
    wrong = apply("wrong_ending_sentence", story, severity=MAJOR, context=CONTEXT)
    assert wrong.text == "Tom went out. Then everyone flew to the moon."
    answer = apply("random_answer", "Paris.", severity=MAJOR, seed=2, context=CONTEXT)
    assert answer.text in CONTEXT["others"]
    assert "no wrong ending" in apply("wrong_ending_sentence", story, severity=MAJOR).note


def test_llm_perturbations_use_the_appendix_d_prompt_and_fail_clearly_without_an_llm():
    seen = []

    def llm(messages):
        seen.append(messages)
        return echo_changed(messages)

    result = apply("fictional_named_entities", SUMMARY, severity=MINOR, complete=llm)
    assert "Zyntara" in result.text
    assert not result.text.startswith("Revised")
    prompt = seen[0][0]["content"]
    assert "Adjustment: Please substitute only one critical named entity within the summary" in prompt
    assert prompt.endswith("Revised Summary:")
    assert SUMMARY in prompt
    assert "needs an LLM" in apply("grammatical_errors", SUMMARY, severity=MAJOR).note
    unchanged = apply("rewriting_and_insertion", SUMMARY, severity=MINOR, complete=lambda m: SUMMARY)
    assert unchanged.text is None
    assert "unchanged" in unchanged.note


def test_every_yescieval_variant_changes_the_text_as_appendix_b3_says():
    names = [n for n, p in REGISTRY.items() if p.family == "yescieval" and p.rubric]
    assert len(names) == 18
    assert {REGISTRY[n].rubric for n in names} == {
        "relevancy",
        "correctness",
        "completeness",
        "informativeness",
        "integration",
        "cohesion",
        "coherence",
        "readability",
        "conciseness",
    }
    for name in names:
        perturbation = REGISTRY[name]
        result = apply(
            name, SUMMARY, severity=perturbation.severities[0], seed=1, context=CONTEXT, complete=echo_changed
        )
        assert result.ok, f"{name}: {result.note}"
    sentences = split_sentences(SUMMARY)

    def run(rubric, severity, **extra):
        return apply(f"{rubric}_{severity}", SUMMARY, severity=severity, seed=1, context=CONTEXT, **extra).text

    assert run("relevancy", SUBTLE).endswith(CONTEXT["same_domain"][0])
    assert run("correctness", EXTREME).endswith(SPORTS)
    assert split_sentences(run("completeness", SUBTLE)) == sentences[:-1]
    assert split_sentences(run("completeness", EXTREME)) == [*sentences[:-1], SPORTS]
    assert run("integration", SUBTLE).startswith("The new model")
    assert "Therefore" in run("integration", SUBTLE)
    extreme = run("integration", EXTREME)
    assert not re.search(r"\b(However|Therefore|Moreover)\b", extreme)
    assert "It is cheap" in extreme
    assert split_sentences(run("cohesion", SUBTLE)) == [*sentences[:-2], sentences[-1], sentences[-2]]
    assert Counter(split_sentences(run("cohesion", EXTREME))) == Counter(sentences)
    assert run("readability", SUBTLE).endswith(BLOG)
    conciseness = split_sentences(run("conciseness", EXTREME, complete=echo_changed))
    assert len(conciseness) == 2 * len(sentences)


def test_configurable_off_topic_sentences_replace_the_shipped_ones():
    text = apply("readability_extreme", SUMMARY, severity=EXTREME, context={"tweet": "our own tweet"}).text
    assert text.endswith("our own tweet")


def test_unknown_names_and_severities_are_refused_with_a_hint():
    with pytest.raises(ValueError, match="Did you mean 'random_typos'"):
        apply("random_typo", SUMMARY, severity=MINOR)
    with pytest.raises(ValueError, match="severities major"):
        apply("random_answer", SUMMARY, severity=MINOR)
    assert apply("random_deletions", "   ", severity=MINOR).note == "the text is empty."


def test_every_survey_quality_issue_is_a_registered_perturbation_so_weights_join():
    from evalhub.core.prompts.surveys import DHP_TEMPLATES, YESCIEVAL_TEMPLATE

    issues = {i["key"] for t in [*DHP_TEMPLATES.values(), YESCIEVAL_TEMPLATE] for i in t["issues"]}
    assert issues == set(REGISTRY)


def test_the_later_rubric_families_are_attacked_by_removing_what_each_family_rewards():
    from evalhub.core.yescieval.rubrics import POINTWISE, rubrics, targets

    families = {r.family for key, r in rubrics()[POINTWISE].items() if not REGISTRY.get(f"{key}_subtle")}
    attacked = {p.rubric_family for p in REGISTRY.values() if p.rubric_family}
    assert attacked == families == {"breadth", "depth", "rigor", "gap", "innovation"}
    # Every rubric the package ships is the target of some attack (the paper's nine, one each).
    assert {t for p in REGISTRY.values() for t in targets(p.rubric, p.rubric_family)} == set(rubrics()[POINTWISE])
    assert targets(REGISTRY["breadth_subtle"].rubric, REGISTRY["breadth_subtle"].rubric_family) == (
        "context_coverage",
        "dimension_coverage",
        "method_coverage",
        "scale_coverage",
        "scope_coverage",
    )

    def run(name, text=SUMMARY):
        severity = name.rsplit("_", 1)[1]
        return apply(name, text, severity=severity, seed=1)

    sentences = split_sentences(SUMMARY)
    assert run("breadth_subtle").text == " ".join(sentences[:-1])
    assert run("breadth_extreme").text == sentences[0]
    # "Therefore it is cheap to deploy." is the first (and only) sentence with a depth cue.
    assert (
        run("depth_subtle").text == run("depth_extreme").text == " ".join(s for s in sentences if "Therefore" not in s)
    )
    # Rigor: figures, hedges — "single GPU" has none, "12 datasets" has a figure.
    assert "12 datasets" not in run("rigor_extreme").text and "single GPU" in run("rigor_extreme").text
    assert run("innovation_subtle").text == " ".join(sentences[1:])  # "the new model …"
    assert run("gap_subtle").note == "no sentence carries a gap cue."  # reported and left out, never a no-op copy
    assert run("innovation_extreme", "A new method. A novel dataset.").note.startswith("every sentence carries")
