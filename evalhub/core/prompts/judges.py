"""Judge prompts: G-Eval style 1–5 scoring for DHP's metrics and YESciEval's rubric prompt.

DHP, Appendix G prints the summarization Coherence prompt (G-Eval with Auto-CoT evaluation
steps); it is used verbatim. The other metrics' steps were written for evalhub the same way,
from the metric definitions of DHP Table 1 (evalhub.core.prompts.surveys holds them).
YESciEval, Section 2 gives the prompt's parts (context, role, task, characteristics, rating
scale, JSON response format, notes) and Appendix E the rating guidelines per rubric.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalhub.core.prompts.surveys import DHP_TEMPLATES, YESCIEVAL_TEMPLATE
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


# The last line of DHP's G-Eval prompt (Appendix G) and the line before YESciEval's synthesis:
# how a judge (the offline heuristic one) tells which answer format a prompt asks for.
GEVAL_ANSWER_CUE = "Evaluation Score (please don't give any feedback, just give a score ONLY)"
YESCIEVAL_ANSWER_CUE = "Synthesis:\n"


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


# YESciEval, Appendix E: the rating guidelines per rubric (levels 1–5).
_RUBRIC_LEVELS = {
    "cohesion": (
        "The sentences within the synthesis are disconnected, resulting in a disjointed and fragmented narrative.",
        "There are attempts at connecting sentences, but the synthesis often feels disjointed.",
        "The sentences are connected in a way that the synthesis is mostly cohesive, with some areas of improvement.",
        "The synthesis is cohesive, with sentences well-connected to form a unified narrative.",
        "The synthesis is highly cohesive, with all sentences and paragraphs logically connected, facilitating a clear "
        "and coherent narrative flow.",
    ),
    "conciseness": (
        "The synthesis is verbose and cluttered with redundant or irrelevant information, significantly detracting "
        "from its clarity and focus.",
        "The synthesis includes some redundant or irrelevant statements, detracting from its clarity.",
        "The synthesis is relatively clear and to the point, but could be more concise by eliminating a few redundant "
        "elements.",
        "The synthesis is concise and to the point, with virtually no redundant statements or unnecessary information.",
        "The synthesis is precisely concise, delivering information clearly and directly without any superfluous "
        "details or redundancy, enhancing its clarity and impact.",
    ),
    "readability": (
        "The synthesis is poorly written, with pervasive issues in style, structure, and language use, making it "
        "difficult to understand.",
        "The text has noticeable issues with style, structure, or language use, affecting clarity.",
        "The synthesis follows appropriate conventions and uses language correctly, with minor issues in style or "
        "structure.",
        "The text is well-structured and easy to read, with language that is appropriately used and only minor "
        "stylistic improvements needed.",
        "The synthesis is exceptionally well-written, following stylistic and structural conventions with precise "
        "language use, making it accessible and easy to read.",
    ),
    "coherence": (
        "The synthesis lacks logical connection between ideas, leading to a narrative that is confusing and difficult "
        "to follow.",
        "The ideas are not always logically connected, leading to a somewhat confusing narrative.",
        "The ideas are logically connected for the most part, but the narrative could be strengthened for better "
        "clarity.",
        "The ideas are logically and soundly connected, offering a clear and understandable narrative.",
        "The ideas within the synthesis are connected in a logical and sound manner, forming a coherent and "
        "compelling narrative that is easy to follow.",
    ),
    "integration": (
        "The synthesis fails to integrate the sources in any meaningful way. It lacks appropriate markers, "
        "connectors, or transitions between ideas and fails to combine the information into a single, cohesive "
        "paragraph.",
        "The sources are somewhat integrated but inconsistently. The use of markers and connectors is sporadic or "
        "inappropriately applied, and the information is presented in multiple paragraphs without a clear unifying "
        "structure.",
        "The sources are integrated into a coherent manner within one or multiple paragraphs. The transitions or "
        "connections could be smoother, and the text would benefit from better paragraph structure to enhance "
        "clarity and unity.",
        "The sources are well-integrated, using appropriate markers and connectors to create a seamless narrative. "
        "The information is effectively organized into a single paragraph, showing a clear, unified approach.",
        "The synthesis seamlessly integrates information from the various sources, using appropriate markers and "
        "connectors to create a smooth and unified narrative. All information is skillfully condensed into a single, "
        "well-structured paragraph, exemplifying excellent integration.",
    ),
    "relevancy": (
        "The information provided does not relate to the research question, showing a lack of understanding or "
        "connection to the topic.",
        "The information occasionally relates to the research question but lacks direct and consistent relevance.",
        "The information is generally related to the research question, with occasional lapses in direct relevance.",
        "The information is consistently relevant to the research question, with only minor exceptions.",
        "The synthesis is directly and consistently relevant to the research question, demonstrating a deep "
        "understanding of the topic and its nuances.",
    ),
    "correctness": (
        "The synthesis consistently misrepresents or inaccurately portrays the content of the provided abstracts, "
        "showing a significant deviation from the original sources.",
        "The synthesis contains several inaccuracies or misinterpretations of the source abstracts.",
        "The synthesis accurately represents most of the content from the provided abstracts but may contain minor "
        "errors.",
        "The synthesis provides an accurate representation of the content from the provided abstracts with minor "
        "exceptions.",
        "The information in the synthesis is an accurate and faithful representation of the content from the "
        "provided abstracts, without any factual errors or misinterpretations.",
    ),
    "completeness": (
        "The synthesis omits most of the relevant information, failing to capture the essential points or details "
        "from the provided abstracts.",
        "Significant portions of relevant information from the provided abstracts are missing.",
        "The synthesis captures a fair amount of the relevant information, though it may overlook some details.",
        "The synthesis includes almost all relevant information, missing only minor details.",
        "The synthesis comprehensively encapsulates all relevant information from the provided abstracts, leaving no "
        "pertinent details or points unaddressed.",
    ),
    "informativeness": (
        "The synthesis offers no valuable insights or useful information in response to the research question, "
        "lacking depth and utility.",
        "The answer provides limited new insights or useful information in response to the research question.",
        "The answer is somewhat informative, offering insights or useful information but not in a comprehensive or "
        "detailed manner.",
        "The answer is informative and insightful, providing comprehensive information in response to the research "
        "question.",
        "The synthesis is highly informative, providing valuable insights and detailed information that thoroughly "
        "addresses the research question.",
    ),
}
RUBRIC_LEVELS: Registry[tuple[str, ...]] = Registry(
    "YESciEval rubric",
    docs="extending/judge-prompts.md",
    what="rubric",
    check=lambda name, levels: "" if len(levels) == 5 else "a rubric has five levels",
    entries=_RUBRIC_LEVELS,
)
LEVEL_NAMES = ("Very bad", "Bad", "Moderate", "Good", "Very good")


def rubric_messages(rubric: str, question: str, answer: str, abstracts: str = "") -> list[dict[str, str]]:
    """YESciEval's judge prompt for one rubric; the judge answers {"rating": 1–5, "rationale": "…"}."""
    rubrics = {r["key"]: r for r in YESCIEVAL_TEMPLATE["metrics"]}
    if rubric not in rubrics:
        raise ValueError(f"unknown rubric {rubric!r}; the nine are {', '.join(rubrics)}.")
    name, characteristic = rubrics[rubric]["name"], rubrics[rubric]["definition"]
    scale = "\n".join(
        f"Rating {n}. {label}: {text}"
        for n, (label, text) in enumerate(zip(LEVEL_NAMES, RUBRIC_LEVELS[rubric], strict=True), 1)
    )
    system = "\n\n".join(
        [
            "Context: A scientific synthesis answers a research question with a coherent summary of the abstracts of "
            "relevant papers.",
            "Role: You are an evaluator of such syntheses.",
            "Task: Assess how well the synthesis answers the research question from the provided abstracts, under "
            "the one characteristic below.",
            f"Evaluation characteristic: {name}. {characteristic}",
            f"Rating scale:\n{scale}",
            'Response format: answer with JSON only: {"rating": <an integer from 1 to 5>, "rationale": "<one or two '
            'sentences on why>"}.',
            "Notes: Be objective and critical. Judge only what is written, against the abstracts; do not reward "
            "length or confident wording.",
        ]
    )
    user = f"Research question: {question}\n\n"
    if abstracts:
        user += f"Abstracts:\n{abstracts}\n\n"
    user += f"{YESCIEVAL_ANSWER_CUE}{answer}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
