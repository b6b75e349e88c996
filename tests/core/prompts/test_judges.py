"""Judge prompts: DHP's G-Eval prompt (Appendix G verbatim for summary coherence) and YESciEval's."""

from __future__ import annotations

import pytest

from evalhub.core.prompts.judges import TASKS, geval_messages
from evalhub.core.prompts.surveys import DHP_TEMPLATES


def test_summary_coherence_is_the_papers_prompt():
    text = geval_messages("dhp-summarization", "coherence", "The summary.", "The article.")[0]["content"]
    assert text.startswith("You will be given a summary written for an article. Your task is to rate")
    assert "Evaluation Criterion: Coherence (1-5) - the collective quality of all sentences." in text
    assert "2. Identify the Central Topic:" in text
    assert "9. Rate the Summary:" in text
    assert text.endswith(
        "Source Article:\n\nThe article.\n\nSummary:\n\nThe summary.\n\n"
        "Evaluation Score (please don't give any feedback, just give a score ONLY) - Coherence:"
    )


def test_every_dhp_metric_has_a_prompt_with_steps_and_a_final_rating_step():
    for task, template in DHP_TEMPLATES.items():
        for metric in template["metrics"]:
            text = geval_messages(task, metric["key"], "X", "S")[0]["content"]
            unit = TASKS[task].unit
            assert f"Evaluation Criterion: {metric['name']} (1-5)" in text
            assert f"Rate the {unit.capitalize()}: Based on the above steps, assign a score between 1-5" in text
            assert text.endswith(f"- {metric['name']}:")


def test_an_unknown_metric_names_the_known_ones():
    with pytest.raises(ValueError, match="coherence, consistency, fluency, relevance"):
        geval_messages("dhp-summarization", "style", "x")


def test_the_summarization_prompt_opens_with_the_papers_words():
    from evalhub.core.prompts.judges import geval_messages

    prompt = geval_messages("dhp-summarization", "coherence", "A summary.", "An article.")[0]["content"]
    assert prompt.startswith(
        "You will be given a summary written for an article. Your task is to rate the summary on one metric."
    )  # DHP, Appendix G, verbatim
