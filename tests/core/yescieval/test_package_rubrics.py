"""YESciEval's prompts are the package's: every rubric its authors ship (22 pointwise, 11 pairwise),
with and without each domain, renders through evalhub exactly as the package's own class renders it,
and rendering one loads neither torch nor peft (the package's judges need them; its rubrics do not)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from evalhub.core.yescieval import rubrics

ROOT = Path(__file__).resolve().parents[3]

# The package's rubrics, written out by hand from its release (module → class): a rubric the package adds,
# drops or renames fails here before it changes what evalhub offers unnoticed.
POINTWISE = {
    "fidelity.correctness": "Correctness",
    "fidelity.completeness": "Completeness",
    "fidelity.informativeness": "Informativeness",
    "structural.relevancy": "Relevancy",
    "structural.integration": "Integration",
    "structural.coherence": "Coherence",
    "stylistic.cohesion": "Cohesion",
    "stylistic.readability": "Readability",
    "stylistic.conciseness": "Conciseness",
    "breadth.context_coverage": "ContextCoverage",
    "breadth.dimension_coverage": "DimensionCoverage",
    "breadth.method_coverage": "MethodCoverage",
    "breadth.scale_coverage": "ScaleCoverage",
    "breadth.scope_coverage": "ScopeCoverage",
    "depth.causal_reasoning": "CausalReasoning",
    "depth.mechanistic_understanding": "MechanisticUnderstanding",
    "depth.temporal_precision": "TemporalPrecision",
    "rigor.epistemic_calibration": "EpistemicCalibration",
    "rigor.explicit_uncertainty": "ExplicitUncertainty",
    "rigor.quantitative_evidence": "QuantitativeEvidenceAndUncertainty",
    "gap.gap_identification": "GapIdentification",
    "innovation.novelty": "StateOfTheArtAndNovelty",
}
PAIRWISE = {place: name for place, name in POINTWISE.items() if place.split(".")[0] in {"breadth", "depth", "rigor"}}
KINDS = {rubrics.POINTWISE: POINTWISE, rubrics.PAIRWISE: PAIRWISE}
QUESTION = "How do pretraining corpora shape multilingual transfer?"
PAPERS = {"Paper one": "We pretrain on 100 languages.", "Paper two": "Transfer drops for low-resource scripts."}
ANSWERS = {rubrics.POINTWISE: ("Synthesis: corpora size matters.",), rubrics.PAIRWISE: ("First answer.", "Second.")}


def _the_packages_class(kind: str, place: str, name: str):
    rubrics.package()  # the bare package: its own __init__ would import its judges (torch, peft)
    module = importlib.import_module(f"yescieval.rubric.{kind}.{place}")
    return getattr(module, name)


def _the_packages_messages(kind: str, place: str, name: str, domain: str | None):
    fields = {"question": QUESTION, "papers": PAPERS}
    if kind == rubrics.PAIRWISE:
        fields["answer_a"], fields["answer_b"] = ANSWERS[kind]
    else:
        fields["answer"] = ANSWERS[kind][0]
    if domain:
        injector = importlib.import_module("yescieval.injector")
        fields.update(domain=domain, vocabulary=injector.VocabularyInjector(), example=injector.ExampleInjector())
    return _the_packages_class(kind, place, name)(**fields).instruct()


def test_evalhub_offers_every_rubric_the_package_ships_and_no_other():
    for kind, expected in KINDS.items():
        found = rubrics.rubrics()[kind]
        assert {f"{r.family}.{r.key}" for r in found.values()} == set(expected), kind
    assert len(rubrics.rubrics()[rubrics.POINTWISE]) == 22 and len(rubrics.rubrics()[rubrics.PAIRWISE]) == 11
    assert set(rubrics.domains()) == {"nlp", "ecology"}


@pytest.mark.parametrize("domain", [None, "nlp", "ecology"])
@pytest.mark.parametrize("kind", [rubrics.POINTWISE, rubrics.PAIRWISE])
def test_every_rubric_renders_through_evalhub_exactly_as_the_package_renders_it(kind, domain):
    for place, name in KINDS[kind].items():
        key = place.split(".")[1]
        sent = rubrics.messages(key, QUESTION, ANSWERS[kind], PAPERS, kind=kind, domain=domain)
        assert sent == _the_packages_messages(kind, place, name, domain), (kind, key, domain)


def test_a_domain_injects_its_vocabulary_and_examples_where_none_leaves_the_placeholders_as_the_package_does():
    plain = rubrics.messages("method_coverage", QUESTION, ANSWERS["pointwise"], PAPERS)[0]["content"]
    nlp = rubrics.messages("method_coverage", QUESTION, ANSWERS["pointwise"], PAPERS, domain="nlp")[0]["content"]
    assert "{METHOD_VOCAB}" in plain and "{METHOD_VOCAB}" not in nlp and "(NLP)" in nlp


def test_an_unknown_rubric_or_domain_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown pointwise YESciEval rubric 'breadthiness'.*method_coverage"):
        rubrics.messages("breadthiness", QUESTION, ANSWERS["pointwise"], PAPERS)
    with pytest.raises(ValueError, match="unknown YESciEval domain 'physics'.*nlp"):
        rubrics.messages("method_coverage", QUESTION, ANSWERS["pointwise"], PAPERS, domain="physics")


def test_rendering_a_rubric_loads_neither_torch_nor_peft():
    script = (
        "import sys; from evalhub.core.yescieval import rubrics; "
        "rubrics.messages('relevancy', 'q', ('a',), {'t': 'x'}, domain='nlp'); "
        "print(sorted(m for m in ('torch', 'peft', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_pairwise_answer_is_read_side_by_side_and_checked_by_the_packages_schema():
    from evalhub.core.prompts.judge_outputs import RubricRating, parse_pairwise_rubric_json

    answer = (
        'Here: {"MethodCoverage": {"ResponseA": {"rating": "4", "rationale": "broad"}, '
        '"ResponseB": {"rating": 2, "rationale": "narrow"}}}'
    )
    assert parse_pairwise_rubric_json(answer) == (RubricRating(4, "broad"), RubricRating(2, "narrow"))
    assert parse_pairwise_rubric_json(answer.replace('"4"', '"6"')) is None  # outside the package's 1–5
    assert parse_pairwise_rubric_json(answer.replace('"4"', '"4.5"')) is None
    assert parse_pairwise_rubric_json('{"rating": 4, "rationale": "one side only"}') is None


def test_a_rubric_of_ones_own_is_offered_and_a_class_not_the_packages_is_refused():
    from evalhub.core.registry import Misregistered

    base = rubrics.package_module("base")

    class Reproducibility(base.PointwiseRubric):
        name: str = "Reproducibility"
        system_prompt_template: str = (
            "<Evaluation-Characteristic>\nReproducibility: can it be redone?\n</Evaluation-Characteristic>"
        )

    rubrics.POINTWISE_RUBRICS.add(
        "reproducibility",
        rubrics.Rubric("reproducibility", "Reproducibility", rubrics.POINTWISE, "rigor", Reproducibility),
    )
    try:
        assert "reproducibility" in rubrics.rubrics()[rubrics.POINTWISE]
        assert rubrics.rubric("reproducibility").definition == "Can it be redone?"
        sent = rubrics.messages("reproducibility", QUESTION, ANSWERS["pointwise"], PAPERS)
        assert sent[0]["content"].startswith("<Evaluation-Characteristic>")
    finally:
        rubrics.POINTWISE_RUBRICS.remove("reproducibility")

    rubrics.POINTWISE_RUBRICS.add(
        "wrong",
        rubrics.Rubric("wrong", "Wrong", rubrics.POINTWISE, "rigor", dict),  # not the package's rubric
    )
    try:
        with pytest.raises(Misregistered, match="not a subclass of yescieval's PointwiseRubric"):
            rubrics.POINTWISE_RUBRICS["wrong"]
    finally:
        rubrics.POINTWISE_RUBRICS.remove("wrong")


def test_the_discernment_page_lists_every_rubric_with_its_family_and_where_it_comes_from():
    page = (ROOT / "docs" / "discernment.md").read_text()
    pairwise = rubrics.rubrics()[rubrics.PAIRWISE]
    for key, rubric in rubrics.rubrics()[rubrics.POINTWISE].items():
        row = f"| {rubric.title} | `{key}` | {rubric.family} | {'yes' if key in pairwise else ''} | {rubric.source} |"
        assert row in page, row


def test_a_familys_name_stands_for_its_rubrics_and_a_key_for_itself():
    assert rubrics.expand(["rigor", "relevancy", "explicit_uncertainty", "nonsense"]) == [
        "epistemic_calibration",
        "explicit_uncertainty",
        "quantitative_evidence",
        "relevancy",
        "nonsense",  # left for the run's check to name
    ]
