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

# A number 1–5 that is not part of a longer number or of a range such as "(1-5)" / "1 to 5".
_SCORE = re.compile(r"(?<![\d.])(?<!\d-)(?<!\d–)(?<!\d to )([1-5](?:\.\d+)?)(?![\d.]*\d)(?!\s*(?:-|–|to)\s*\d)")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_likert_score(text: str, low: int = 1, high: int = 5) -> float | None:
    """The first number in [low, high] in the answer: "4", "Score: 4.5", "Coherence (1-5): 3"."""
    for match in _SCORE.finditer(text or ""):
        value = float(match.group(1))
        if low <= value <= high:
            return value
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


def _load(block: str) -> dict | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(block)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_rubric_json(text: str) -> RubricRating | None:
    """{"rating": 1–5, "rationale": "..."} from an answer that may wrap it in code fences, add text
    around it, use single quotes, nest it under the rubric's name, or give the rating as "4"."""
    candidates = [m.group(1) for m in _FENCE.finditer(text or "")] + [text or ""]
    for candidate in candidates:
        for block in _objects(candidate):
            data = _load(block)
            if data is None:
                continue
            if "rating" not in {str(k).lower() for k in data} and len(data) == 1:
                inner = next(iter(data.values()))  # {"Cohesion": {"rating": 4, ...}}
                data = inner if isinstance(inner, dict) else data
            fields = {str(k).lower(): v for k, v in data.items()}
            rating = fields.get("rating", fields.get("score"))
            try:
                value = float(str(rating).strip())
            except ValueError:
                continue
            if value.is_integer() and 1 <= value <= 5:
                return RubricRating(int(value), str(fields.get("rationale", fields.get("reason", ""))).strip())
    return None
