"""The criteria evalhub ships, one per ScaleEval scenario (ScaleEval, Section 4).

Helpfulness's and creativity's level texts are ScaleEval's (Appendix A.2, Table 8 and the
creativity "General Format Version"); interpretability and reasoning follow the same
five-level pattern and were written for evalhub.
"""

from __future__ import annotations

from typing import Any

BUILTIN_CRITERIA: dict[str, dict[str, Any]] = {
    "helpfulness": {
        "name": "Helpfulness",
        "scenario": "brainstorming",
        "definition": "How well the response meets the user's actual need: relevant, accurate, complete and usable.",
        # ScaleEval, Table 8, "General Format Version".
        "levels": {
            "1": "Not Helpful - The response is completely unrelated, lacks coherence, and fails to provide any "
            "meaningful information.",
            "2": "Somewhat Helpful - The response bears some relevance but remains largely superficial and unclear, "
            "addressing only the peripheral aspects of the user's needs.",
            "3": "Moderately Helpful - The response is mostly relevant and clear, covering the basic aspects of the "
            "query, but lacks depth and comprehensive elucidation.",
            "4": "Helpful - The response is on-point, detailed, and well-articulated, offering valuable information "
            "and clarifications that meet the user's primary needs and enhance understanding.",
            "5": "Highly Helpful - The response is exceptionally thorough and precise, providing additional insights "
            "and valuable supplementary information.",
        },
    },
    "interpretability": {
        "name": "Interpretability",
        "scenario": "code",
        "definition": "How easily a reader can understand what the code or explanation does and why.",
        "levels": {
            "1": "Opaque - The response cannot be followed: no explanation, misleading names, or code whose purpose "
            "and behaviour cannot be worked out.",
            "2": "Hard to Follow - Some parts are explained, but the structure is confusing and key decisions are "
            "left unexplained.",
            "3": "Understandable - A reader can follow the response with effort; the main idea is explained but "
            "details or edge cases are not.",
            "4": "Clear - The response is well structured and explains its main steps and decisions; names and "
            "comments help the reader.",
            "5": "Exemplary - Every step is easy to follow; the explanation, structure and naming make the purpose, "
            "behaviour and limits of the solution evident.",
        },
    },
    "reasoning": {
        "name": "Reasoning",
        "scenario": "math",
        "definition": "Whether the response reaches a correct conclusion through valid, complete steps.",
        "levels": {
            "1": "Invalid - The reasoning is missing or wrong, and the conclusion does not follow from the problem.",
            "2": "Flawed - Some steps are valid, but a major error or gap leads to a wrong or unsupported conclusion.",
            "3": "Partly Sound - The approach is right and most steps hold, but there are minor errors or unjustified "
            "leaps.",
            "4": "Sound - The steps are valid and lead to the correct conclusion, with at most small presentation "
            "issues.",
            "5": "Rigorous - Every step is valid and justified, the conclusion is correct, and the argument is "
            "complete and easy to verify.",
        },
    },
    "creativity": {
        "name": "Creativity",
        "scenario": "writing",
        "definition": "Originality, depth and coherence of the ideas in the response.",
        "levels": {
            "1": "Beginning - The response is notably lacking in originality, depth, and coherence. It demonstrates "
            "a fundamental misunderstanding of the topic, predominantly featuring generic or clichéd thoughts.",
            "2": "Developing - The response reveals faint traces of originality, but ideas are largely underdeveloped "
            "or superficial. While there are attempts at creative thinking, they often revert to commonplace "
            "concepts. The response may deviate from the main topic.",
            "3": "Competent - The response exhibits a blend of conventional and innovative ideas. It showcases "
            "evident creative thinking and a reasonable infusion of original insights. While the response remains "
            "largely on-topic, certain areas could be further enriched through deeper exploration.",
            "4": "Proficient - The response includes imaginative and innovative thoughts, reflecting a depth of "
            "thinking and divergent exploration. It is content-rich and structured coherently, highlighting a "
            "well-considered and effectively executed creative process.",
            "5": "Mastery - The response stands as a beacon of creativity, weaving together profound insights, "
            "thoughtful concepts, and astute judgement. Every element of the content radiates originality. The "
            "delivery is articulate, compelling, and showcases the pinnacle of creative thought.",
        },
    },
}

# The built-in criterion a benchmark's task type is judged by when nothing else says: maths and
# factual answers on reasoning, chat on helpfulness, stories on creativity. Task types with no
# fitting built-in (peer review, summaries, translation) are absent.
CRITERION_FOR_TASK_TYPE: dict[str, str] = {
    "question_answering": "reasoning",
    "science_qa": "reasoning",
    "open_chat": "helpfulness",
    "story_completion": "creativity",
}
