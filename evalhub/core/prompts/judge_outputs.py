"""Reading judges' answers: a G-Eval 1–5 score (DHP, Appendix G) and YESciEval's JSON
{rating, rationale} (YESciEval, Section 2, "Response Format").

Both return None when nothing usable is there, so the caller can re-ask once and then record
the answer as invalid — never as a made-up score.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_NUMBER = r"(?P<n>\d+(?:\.\d+)?)"
_OUT_OF = r"(?:\s*(?:/|out\s+of)\s*5)?"
# A score alone: "4", "**4**", "4/5", "4 out of 5", "4." — a whole line and nothing else.
_BARE = re.compile(rf"^\W*?{_NUMBER}{_OUT_OF}[*_.]*$", re.IGNORECASE)
# A score labelled by words and ending its line: "Score: 4", "Coherence: 4", "Rating: 4/5",
# "Coherence (1-5): 2", "9. Rate: 4", "**Score:** 4" (a number in prose, "Submission 1 is …", is not one).
_LABELLED = re.compile(
    rf"(?:^|(?<=[\s.,;(*_#>-]))[A-Za-z][A-Za-z ]{{0,40}}?(?:\s*\(\s*1\s*[-–]\s*5\s*\))?[*_]*\s*[:=][\s*_]*"
    rf"{_NUMBER}{_OUT_OF}[*_]*\s*\.?\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_likert_score(text: str, low: int = 1, high: int = 5) -> float | None:
    """A score in [low, high] stated as a score (DHP, Appendix G asks for "a score ONLY"): the whole
    answer is a number ("4", "4/5"), or the last line that labels one ("Score: 4", "Coherence: 4",
    "Rating: 4/5"), or a number alone on the last line. A number inside prose — "Submission 1 …",
    "1. Read the summary …", "I'd give it a 2" — is never read as a score: the caller re-asks once,
    then stores the answer as invalid."""
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return None
    candidates = [_BARE.match(lines[-1])] + [_LABELLED.search(line) for line in reversed(lines)]
    if len(lines) == 1:
        candidates.insert(0, _BARE.match(lines[0]))
    for match in candidates:
        if match is not None:
            value = float(match.group("n"))
            return value if low <= value <= high else None
    return None


@dataclass(frozen=True)
class RubricRating:
    rating: int
    rationale: str


def _objects(text: str) -> list[str]:
    """Every balanced {...} block, outermost first (strings respected)."""
    blocks, depth, start, quote, escaped = [], 0, None, "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and depth:
            quote = char
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                blocks.append(text[start : index + 1])
    return blocks


def _load(block: str) -> dict[str, Any] | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(block)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _dicts(text: str) -> list[dict[str, Any]]:
    """Every JSON (or Python-literal) object in an answer, those in code fences first."""
    candidates = [m.group(1) for m in _FENCE.finditer(text or "")] + [text or ""]
    return [data for candidate in candidates for block in _objects(candidate) if (data := _load(block)) is not None]


def _unwrapped(data: dict[str, Any]) -> dict[str, Any]:
    """{"Cohesion": {...}} → {...}: the package's answers are keyed by the rubric's name."""
    if "rating" not in {str(k).lower() for k in data} and len(data) == 1:
        inner = next(iter(data.values()))
        return inner if isinstance(inner, dict) else data
    return data


def _rating(data: dict[str, Any]) -> RubricRating | None:
    """One {rating, rationale}, read strictly (a rating of "4" or 4.0 is 4; 4.5, 0 or 6 is nothing) and
    checked by the package's own schema of a rating (`yescieval`'s RubricLikertScale: an integer 1–5
    and its rationale)."""
    fields = {str(k).lower(): v for k, v in data.items()}
    try:
        value = float(str(fields.get("rating", fields.get("score"))).strip())
    except ValueError:
        return None
    if not value.is_integer():
        return None
    rationale = str(fields.get("rationale", fields.get("reason", ""))).strip()
    try:
        checked = likert_scale().model_validate({"rating": int(value), "rationale": rationale})
    except ValueError:  # pydantic's ValidationError: out of 1–5
        return None
    return RubricRating(int(checked.rating), str(checked.rationale))


def likert_scale() -> Any:
    """The package's schema of one rating (imported without its judges: evalhub.core.yescieval.rubrics)."""
    from evalhub.core.yescieval.rubrics import package_module

    return package_module("base.parser").RubricLikertScale


def parse_rubric_json(text: str) -> RubricRating | None:
    """{"rating": 1–5, "rationale": "..."} from an answer that may wrap it in code fences, add text
    around it, use single quotes, nest it under the rubric's name (as YESciEval's prompts ask), or give
    the rating as "4"."""
    for data in _dicts(text):
        rating = _rating(_unwrapped(data))
        if rating is not None:
            return rating
    return None


PAIRWISE_SIDES = ("responsea", "responseb")


def parse_pairwise_rubric_json(text: str) -> tuple[RubricRating, RubricRating] | None:
    """YESciEval's pairwise answer, {"Name": {"ResponseA": {rating, rationale}, "ResponseB": {...}}}
    (read as strictly as one rating, the name's level optional): both ratings, or None."""
    for data in _dicts(text):
        sides = {str(k).lower().replace(" ", "").replace("_", ""): v for k, v in _unwrapped(data).items()}
        if not all(isinstance(sides.get(side), dict) for side in PAIRWISE_SIDES):
            continue
        a, b = (_rating(sides[side]) for side in PAIRWISE_SIDES)
        if a is not None and b is not None:
            return a, b
    return None
