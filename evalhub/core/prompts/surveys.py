"""Expert-weight survey templates evalhub ships.

DHP's four task types (DHP, Tables 1–2; the summarization metric definitions and the first
issue wording are the survey's own, Appendix E, Figure 7; the other wordings were written for
evalhub in the same style) and YESciEval's nine rubrics with their subtle and extreme
adversarial variants (YESciEval, Sections 2–3). Each quality issue is keyed by the
perturbation it stands for; experts see only its plain description.
"""

from __future__ import annotations

from typing import Any

from evalhub.core.yescieval.rubrics import PAPER_RUBRICS, POINTWISE, rubrics

INSTRUCTIONS = (
    "You are an evaluator assessing the quality of outputs on a 1–5 Likert scale under several metrics. "
    "For each quality issue below, select the metric you think is most affected by it, that is, the metric "
    "that should get the lowest score because of this issue. (After DHP, Appendix E.)"
)

_SUMMARY = {
    "coherence": (
        "Coherence",
        "The collective quality of all sentences: the summary should be well-structured and "
        "well-organized, building from sentence to sentence to a coherent body of information about a topic.",
    ),
    "consistency": (
        "Consistency",
        "The factual alignment between the summary and the source: a consistent summary "
        "contains only statements entailed by the source and no hallucinated facts.",
    ),
    "fluency": (
        "Fluency",
        "The quality of individual sentences: no formatting problems, capitalization errors or "
        "ungrammatical sentences (fragments, missing components) that make the text hard to read.",
    ),
    "relevance": (
        "Relevance",
        "Selection of important content from the source: only important information, "
        "without redundancies or excess information.",
    ),
}

_CHARACTER_AND_WORD = {
    "random_deletions": "In the {data}, there are some incomplete words with random missing letters.",
    "random_typos": "In the {data}, there are several typing mistakes: letters swapped, doubled or wrong.",
    "fictional_named_entities": "In the {data}, some names, places, numbers or technical terms were replaced by "
    "invented ones that do not match the source.",
    "grammatical_errors": "The {data} contains grammatical errors, such as subject-verb disagreement, a wrong verb "
    "tense, a misused preposition or a sentence fragment.",
}


def _task(title: str, data: str, metrics: dict[str, tuple[str, str]], issues: dict[str, str]) -> dict[str, Any]:
    return {
        "title": title,
        "instructions": f"{INSTRUCTIONS}\n\nData: {data}.",
        "metrics": [{"key": key, "name": name, "definition": text} for key, (name, text) in metrics.items()],
        "issues": [{"key": key, "description": text} for key, text in issues.items()],
    }


DHP_TEMPLATES: dict[str, dict[str, Any]] = {
    "dhp-summarization": _task(
        "DHP: summarization",
        "a short summary written for a news paragraph or a section of a paper",
        _SUMMARY,
        {
            **{k: v.format(data="summary") for k, v in _CHARACTER_AND_WORD.items()},
            "reordering": "The sentences of the summary are in a scrambled order.",
            "rewriting_and_insertion": (
                "Some sentences of the summary are repeated right after themselves in other words."
            ),
        },
    ),
    "dhp-story-completion": _task(
        "DHP: story completion",
        "the ending sentence written for a short story",
        {
            "coherence": (
                "Coherence",
                "The ending follows logically from the story and makes the whole story hang together.",
            ),
            "consistency": (
                "Consistency",
                "The ending agrees with the facts of the story: its people, places and events.",
            ),
            "fluency": ("Fluency", "The ending is a well-formed, grammatical sentence that reads naturally."),
        },
        {
            **{k: v.format(data="ending") for k, v in _CHARACTER_AND_WORD.items()},
            "random_ending_sentence": "The ending belongs to a different, unrelated story.",
            "wrong_ending_sentence": "The ending contradicts or does not follow from the story.",
        },
    ),
    "dhp-question-answering": _task(
        "DHP: question answering",
        "an answer written to a question",
        {
            "answer_quality": (
                "Answer quality",
                "How well the answer responds to the question: correct, complete and clear.",
            )
        },
        {
            **{k: v.format(data="answer") for k, v in _CHARACTER_AND_WORD.items()},
            "random_answer": "The answer responds to a different question.",
        },
    ),
    "dhp-translation": _task(
        "DHP: translation",
        "an English translation of a German or Chinese text",
        {
            "accuracy": ("Accuracy", "The translation conveys the meaning of the source completely and correctly."),
            "fluency": ("Fluency", "The translation reads as natural, grammatical English."),
        },
        {
            **{k: v.format(data="translation") for k, v in _CHARACTER_AND_WORD.items()},
            "random_word_deletions": "A run of several consecutive words is missing from the translation.",
        },
    ),
}

# YESciEval: the paper's nine rubrics as questions, in the words of its authors' package (each rubric's
# characteristic: evalhub.core.yescieval.rubrics); Section 3: the adversarial heuristic per rubric.
_PACKAGED = rubrics()[POINTWISE]
_RUBRICS = {key: (_PACKAGED[key].title, _PACKAGED[key].definition) for key in PAPER_RUBRICS}
_ADVERSARIAL = {
    "relevancy_subtle": "A sentence from another answer on a related topic was added at the end.",
    "relevancy_extreme": "An unrelated sentence (for example, sports news) was added.",
    "correctness_subtle": "A sentence from another answer in the same field, not backed by these abstracts, was added.",
    "correctness_extreme": "An unrelated, off-topic sentence was added.",
    "completeness_subtle": "The last sentence of the answer was removed.",
    "completeness_extreme": "The last sentence was removed and unrelated text was added.",
    "informativeness_subtle": "A loosely related sentence that adds nothing useful was appended.",
    "informativeness_extreme": "An unrelated sentence that says nothing about the question was added.",
    "integration_subtle": "The first logical connector (such as 'however' or 'therefore') was removed.",
    "integration_extreme": "All logical connectors were removed.",
    "cohesion_subtle": "The last two sentences were swapped.",
    "cohesion_extreme": "All sentences were shuffled into a random order.",
    "coherence_subtle": "A sentence on a neighbouring topic was appended, breaking the line of reasoning.",
    "coherence_extreme": "An unrelated sentence was inserted, breaking the line of reasoning.",
    "readability_subtle": "An informal, blog-style snippet was added.",
    "readability_extreme": "A tweet-style snippet with slang and hashtags was added.",
    "conciseness_subtle": "The last sentence was repeated in other words.",
    "conciseness_extreme": "Every sentence was followed by a redundant rewording of itself.",
    # evalhub's attacks on the package's later rubric families (evalhub.core.dhp.perturbations)
    "breadth_subtle": "The answer's last sentence, and the aspect it covered, was removed.",
    "breadth_extreme": "Only the answer's first sentence was kept: one aspect is covered.",
    "depth_subtle": "The first sentence explaining causes, mechanisms or timing was removed.",
    "depth_extreme": "Every sentence explaining causes, mechanisms or timing was removed.",
    "rigor_subtle": "The first sentence with a hedge, a figure or an uncertainty was removed.",
    "rigor_extreme": "Every sentence with a hedge, a figure or an uncertainty was removed.",
    "gap_subtle": "The first sentence naming a gap or an open question was removed.",
    "gap_extreme": "Every sentence naming a gap or an open question was removed.",
    "innovation_subtle": "The first sentence naming a new or state-of-the-art contribution was removed.",
    "innovation_extreme": "Every sentence naming a new or state-of-the-art contribution was removed.",
}

YESCIEVAL_TEMPLATE = _task(
    "YESciEval: science Q&A rubrics",
    "an answer to a science question synthesised from research paper abstracts",
    _RUBRICS,
    _ADVERSARIAL,
)

TEMPLATES: dict[str, dict[str, Any]] = {**DHP_TEMPLATES, "yescieval": YESCIEVAL_TEMPLATE}
