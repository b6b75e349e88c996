"""Judge prompts: G-Eval style 1–5 scoring for DHP's metrics.

DHP, Appendix G prints the summarization Coherence prompt (G-Eval with Auto-CoT evaluation
steps); it is used verbatim. The other metrics' steps were written for evalhub the same way,
from the metric definitions of DHP Table 1 (evalhub.core.prompts.surveys holds them).
YESciEval's rubric prompts are its authors' package's (evalhub.core.yescieval.rubrics).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalhub.core.prompts.surveys import DHP_TEMPLATES
from evalhub.core.registry import Registry


@dataclass(frozen=True)
class TaskFrame:
    unit: str  # what is rated
    source: str  # the heading of what it was written for
    written_for: str = ""  # the opening line's words for it ("an article", as DHP Appendix G writes)

    @property
    def opening_for(self) -> str:
        return self.written_for or f"a {self.source.lower()}"


_TASKS = {
    "dhp-summarization": TaskFrame("summary", "Source Article", "an article"),
    "dhp-story-completion": TaskFrame("ending", "Story"),
    "dhp-question-answering": TaskFrame("answer", "Question"),
    "dhp-translation": TaskFrame("translation", "Source Text"),
}
TASKS: Registry[TaskFrame] = Registry(
    "DHP judge task",
    docs="extending/judge-prompts.md",
    check=lambda name, frame: "" if isinstance(frame, TaskFrame) else "not a TaskFrame",
    entries=_TASKS,
)

# DHP, Appendix G, verbatim: the summarization Coherence criterion and steps.
PAPER_COHERENCE = (
    "the collective quality of all sentences. We align this dimension with the DUC quality question of structure and "
    "coherence whereby the summary should be well-structured and well-organized. The summary should not just be a "
    "heap of related information, but should build from sentence to sentence to a coherent body of information about "
    "a topic.",
    [
        "Read the Summary Thoroughly: Before diving into the evaluation, ensure that you have a clear understanding of "
        "the entire summary. Reading it more than once might be necessary.",
        "Identify the Central Topic: A coherent summary will have a clear central topic or theme. Identify this topic "
        "and see if the subsequent information revolves around it.",
        "Check for Logical Flow: Review the summary for logical sequencing. Sentences should follow one another in a "
        "way that makes sense and allows the reader to easily follow the progression of information.",
        "Look for Transitional Elements: Coherent summaries often have clear transitions between sentences or ideas. "
        "This could be in the form of transitional words, phrases, or connecting ideas that tie one sentence to the "
        "next.",
        "Identify Redundancies: Check if the same information is repeated in different sentences. Redundancies can "
        "disrupt the flow and coherence of a summary.",
        "Note Any Gaps or Jumps: If there are sudden jumps in topics or if crucial information seems to be missing, "
        "this can harm the coherence of the summary. A well-organized summary should present a holistic view of the "
        "topic without leaving the reader with questions.",
        "Assess Clarity: Even if the content is technically accurate, if it's written in a convoluted or unclear "
        "manner, it can disrupt coherence. The sentences should be clear and easily understandable.",
        "Consider the Conclusion: A coherent summary often wraps up or comes to a conclusion that ties the presented "
        "information together. It doesn't necessarily need a formal conclusion, but the end should feel natural and "
        "not abrupt.",
        "Rate the Summary: Based on the above steps, assign a score between 1-5 for coherence. - 1: Very incoherent. "
        "The summary lacks structure, has sudden jumps, and is difficult to follow. - 2: Somewhat incoherent. The "
        "summary has some semblance of structure, but has significant flaws in flow and organization. - 3: Neutral. "
        "The summary is decently organized, with minor issues in flow and structure. - 4: Mostly coherent. The "
        "summary is well-structured with very few minor coherence issues. - 5: Highly coherent. The summary is "
        "excellently organized, flows seamlessly, and builds information logically from start to end.",
    ],
)

# Evaluation steps for the other metrics (evalhub's, in the paper's style). "{unit}"/"{source}"
# are filled per task; the last step always asks for the 1–5 score.
_STEPS = {
    "consistency": [
        "Read the {source} and identify its main facts: people, places, numbers, events and claims.",
        "Read the {unit} and list every fact it states.",
        "Check each fact of the {unit} against the {source}: is it stated or clearly implied there?",
        "Note any fact that is contradicted by the {source}, invented, or attributed to the wrong entity.",
    ],
    "fluency": [
        "Read the {unit} sentence by sentence.",
        "Look for spelling mistakes, missing or extra letters, and broken words.",
        "Look for grammatical errors: agreement, verb tense, prepositions, sentence fragments.",
        "Judge whether the text reads naturally, without formatting or capitalization problems.",
    ],
    "relevance": [
        "Read the {source} and identify its most important points.",
        "Read the {unit} and check which of these points it covers.",
        "Note information in the {unit} that is unimportant, redundant or repeated.",
        "Judge how well the {unit} selects the important content and only that.",
    ],
    "coherence": [
        "Read the {source} and then the {unit}.",
        "Check that the {unit} follows logically from the {source}.",
        "Look for jumps, contradictions or ideas that do not connect.",
        "Judge whether, with the {unit}, the whole reads as one connected piece.",
    ],
    "answer_quality": [
        "Read the {source} and work out what a good answer must contain.",
        "Read the {unit} and check whether it answers that question, correctly and completely.",
        "Look for errors, irrelevant content and unclear wording.",
        "Judge how useful the {unit} is as an answer to the {source}.",
    ],
    "accuracy": [
        "Read the {source} and identify its meaning sentence by sentence.",
        "Read the {unit} and compare its meaning with the {source}.",
        "Note omissions, additions, mistranslated words and changed names or numbers.",
        "Judge how completely and correctly the {unit} conveys the {source}.",
    ],
}
STEPS: Registry[list[str]] = Registry(
    "DHP judge metric", docs="extending/judge-prompts.md", what="metric's evaluation steps", entries=_STEPS
)
SCALE = "1 is very poor, 3 is acceptable with clear flaws, and 5 is excellent with no flaws."


def metric_of(task: str, metric: str) -> tuple[str, str]:
    for entry in DHP_TEMPLATES[task]["metrics"]:
        if entry["key"] == metric:
            return entry["name"], entry["definition"]
    known = ", ".join(m["key"] for m in DHP_TEMPLATES[task]["metrics"])
    raise ValueError(f"{task} has metrics {known}, not {metric!r}.")


# The last line of DHP's G-Eval prompt (Appendix G): how a judge (the offline heuristic one) tells
# which answer format a prompt asks for.
GEVAL_ANSWER_CUE = "Evaluation Score (please don't give any feedback, just give a score ONLY)"


def geval_messages(task: str, metric: str, text: str, source: str = "") -> list[dict[str, str]]:
    """The DHP judge prompt for one text and one metric; the judge answers with a score only."""
    frame = TASKS[task]
    name, definition = metric_of(task, metric)
    if task == "dhp-summarization" and metric == "coherence":
        definition, steps = PAPER_COHERENCE
    else:
        steps = [s.format(unit=frame.unit, source=frame.source.lower()) for s in STEPS[metric]]
        steps.append(
            f"Rate the {frame.unit.capitalize()}: Based on the above steps, assign a score between 1-5 for "
            f"{name.lower()}, where {SCALE}"
        )
        definition = definition[0].lower() + definition[1:]
    numbered = "\n\n".join(f"{n}. {step}" for n, step in enumerate(steps, 1))
    lines = [
        f"You will be given a {frame.unit} written for {frame.opening_for}. Your task is to rate the {frame.unit} "
        "on one metric. Please make sure you read and understand these instructions carefully. Please keep this "
        "document open while reviewing, and refer to it as needed.",
        f"Evaluation Criterion: {name} (1-5) - {definition}",
        f"Evaluation Steps:\n\n{numbered}",
    ]
    if source:
        lines.append(f"{frame.source}:\n\n{source}")
    lines.append(f"{frame.unit.capitalize()}:\n\n{text}")
    lines.append(f"{GEVAL_ANSWER_CUE} - {name}:")
    return [{"role": "user", "content": "\n\n".join(lines)}]
