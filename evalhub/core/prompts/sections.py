"""Judge prompts are built from titled sections, in ScaleEval's format: "[Title]: text".

Debate and judge templates use these markers (ScaleEval, Appendix A.2), and the offline
heuristic judge reads them back, so both sides agree on where a submission or the
reference answer starts and ends.
"""

from __future__ import annotations

import re

QUESTION = "Question"
SUBMISSION_1 = "Submission 1"
SUBMISSION_2 = "Submission 2"
CRITERIA = "Criteria"
RESPONSE = "Response"
REFERENCE_ANSWER = "Reference answer"
RATING_GUIDELINES = "Rating guidelines"

_HEADER = re.compile(r"^\[([^\]\n]{1,200})\]:[ \t]?", re.MULTILINE)


def section(title: str, body: str) -> str:
    return f"[{title}]: {body.strip()}\n"


def parse_sections(text: str) -> dict[str, str]:
    """{title: body} for every "[Title]: …" section; text before the first marker is dropped."""
    headers = list(_HEADER.finditer(text))
    sections: dict[str, str] = {}
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        sections[header.group(1)] = text[header.end() : end].strip()
    return sections
