"""Hints made from a reference solution, for difficulty tiers (privileged-information paper).

Section 2.2 and 3.2: an LM breaks the ground-truth solution into k partial solutions that
build up to it without giving the final answer away; a candidate at tier t sees the first t.
Figure 9 is the prompt. Because an LM may still write the answer into a hint, every hint set
is checked against the reference's final answer and a hint that contains it is flagged.

`prefix_hints` is a rule-based maker that needs no model: the reference's sentences split into
k consecutive parts, leaving out every sentence that states the final answer — honest about
what it is, and what the quickstart and the tests use offline.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

HINT_PROMPT_VERSION = "pi-figure9-v1"
RULE_BASED = "reference-prefix"  # the hint maker that is not a model


def hint_messages(problem: str, solution: str, k: int = 3) -> list[dict[str, str]]:
    """Privileged-information paper, Figure 9 (the paper uses k = 3)."""
    return [
        {
            "role": "user",
            "content": (
                f"I have a math problem and its corresponding solution. I want you to write {k} partial solutions "
                "that incrementally build up to the solution of the problem. Please enclose partial solution N "
                "inside <partial_solution_N> and </partial_solution_N>. Do not give away the boxed answer in your "
                "partial solutions. Also make sure the next partial solution contains all the content from its "
                f"preceding partial solution.\n\nProblem: {problem}\n\nSolution:\n{solution}"
            ),
        }
    ]


def parse_hints(text: str, k: int) -> list[str]:
    """The k partial solutions in order; ValueError naming the first one missing or empty."""
    hints = []
    for n in range(1, k + 1):
        found = re.search(rf"<partial_solution_{n}>(.*?)</partial_solution_{n}>", text, re.DOTALL | re.IGNORECASE)
        if not found or not found.group(1).strip():
            raise ValueError(f"the answer has no <partial_solution_{n}> … </partial_solution_{n}> (of {k} asked).")
        hints.append(found.group(1).strip())
    return hints


# --- the final answer ---------------------------------------------------------------------


def _last_braced(text: str, command: str) -> str | None:
    """The content of the last `\\command{…}`, braces balanced (answers like \\frac{1}{2} nest)."""
    start = text.rfind("\\" + command + "{")
    if start < 0:
        return None
    i = start + len(command) + 2
    depth, out = 1, list[str]()
    while i < len(text):
        char = text[i]
        depth += char == "{"
        depth -= char == "}"
        if depth == 0:
            return "".join(out).strip()
        out.append(char)
        i += 1
    return None


# "The answer is x", "Final answer: x", or a line "Answer: x" (multiple-choice style).
_ANSWER_IS = re.compile(r"(?:final answer|the answer|^answer)\s*(?:is|:)\s*\$?([^\n$]+?)\$?\s*(?:\.\s*)?$", re.I | re.M)


def final_answer(reference: str, explicit: str = "") -> str | None:
    """The final answer: an explicit one, else the last \\boxed{…}, else GSM8K's `#### x`, else
    "the answer is x"; None when the reference states none."""
    if explicit and explicit.strip():
        return explicit.strip()
    boxed = _last_braced(reference, "boxed") or _last_braced(reference, "fbox")
    if boxed:
        return boxed
    marked = re.findall(r"^####\s*(.+?)\s*$", reference, re.M)
    if marked:
        return str(marked[-1])
    stated = _ANSWER_IS.findall(reference)
    return stated[-1].strip() if stated else None


def normalise(text: str, *, keep_spaces: bool = False) -> str:
    """Lower case; no spacing (single spaces with `keep_spaces`), $…$, \\left/\\right, \\text{}, degree
    signs or trailing full stop."""
    text = text.strip().lower()
    for old, new in (
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("^\\circ", ""),
        ("^{\\circ}", ""),
        ("°", ""),
        ("\\!", ""),
        ("\\,", ""),
        ("\\;", ""),
        ("$", ""),
        ("\\%", "%"),
    ):
        text = text.replace(old, new)
    text = re.sub(r"\\(?:text|mathrm|textbf|mbox)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\s+", " " if keep_spaces else "", text).strip()
    return text.rstrip(".")


def leaking_hints(hints: Sequence[str], answer: str | None) -> list[int]:
    """Indices (from 0) of the hints that contain the final answer, compared normalised, spacing
    ignored, as a whole token (12 is not found in 123 or 1.12); a \\boxed{…} in a hint is a leak too."""
    target = normalise(answer) if answer else ""
    # Spaces may fall anywhere inside the answer as a hint writes it ("27, 63" for "27,63").
    pattern = re.compile(r"\s?".join(re.escape(char) for char in target)) if target else None
    leaks = []
    for index, hint in enumerate(hints):
        flat = normalise(hint, keep_spaces=True)
        found = pattern is not None and any(_whole(flat, m.start(), m.end()) for m in pattern.finditer(flat))
        if found or "\\boxed{" in hint:
            leaks.append(index)
    return leaks


def _whole(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    decimal_after = after == "." and end + 1 < len(text) and text[end + 1].isdigit()
    return not (before.isalnum() or before == ".") and not (after.isalnum() or decimal_after)


@dataclass(frozen=True)
class RuleBasedHints:
    hints: list[str]
    dropped: int  # sentences left out because they state the final answer


def _sentences(text: str) -> list[str]:
    # Display maths and numbered steps stay whole: split on a full stop followed by a capital or a line break.
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\\$])|\n\s*\n", text.strip())
    return [p.strip() for p in parts if p and p.strip()]


def prefix_hints(solution: str, k: int, answer: str | None) -> RuleBasedHints:
    """k consecutive parts of the reference solution, none of which states the final answer.
    ValueError when the solution has fewer usable sentences than hints asked for."""
    sentences = _sentences(solution)
    kept = [s for s in sentences if not leaking_hints([s], answer)]
    if len(kept) < k + 1:
        raise ValueError(
            f"the reference solution has {len(kept)} sentence(s) that do not state the answer; "
            f"{k} hints need at least {k + 1} (the last part is never given)."
        )
    # The solution's last part stays hidden: hint n ends at sentence ⌈n·m/(k+1)⌉.
    bounds = [math.ceil(n * len(kept) / (k + 1)) for n in range(k + 1)]
    hints = [" ".join(kept[bounds[n] : bounds[n + 1]]) for n in range(k)]
    return RuleBasedHints(hints, len(sentences) - len(kept))
