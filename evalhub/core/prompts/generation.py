"""Prompt templates for generation runs: named placeholders, checked before a template is saved.

A template is a system text and a user text with `{placeholder}` fields filled from the
prompt. Unknown names, positional `{}` fields, attribute/index access and format specs are
refused when the template is saved, so a run never fails half-way on a typo. A literal brace
is written `{{` or `}}`.

Hints (privileged-information paper, Section 2.2): a template may place them with `{hints}`;
one that does not gets the hint block appended to its user text at tiers above 0, so every
template works with hint tiers.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PLACEHOLDERS = {
    "prompt": "the prompt's text",
    "source": "the prompt's full source (e.g. the paper's text)",
    "synopsis": "the prompt's synopsis (e.g. the abstract)",
    "category": "the prompt's category or scenario",
    "hints": "the hints of the tier, numbered (empty at tier 0)",
}

# GEM, Appendix C.3: the system prompt each candidate LLM gets to write a GRE-bench review;
# the user turn is the full paper in text format.
GRE_BENCH_REVIEW_SYSTEM = (
    "You are given a paper submission for a top-tier Machine Learning conference which you need to write a "
    "detailed review. Please read the paper carefully. Once you have finished reading, please provide the "
    "following in your review:\n\n"
    "First, write a concise summary of the key points and contributions of the paper inside <summary> tags.\n\n"
    "Next, think critically about the strengths and weaknesses of the submission. Inside <strengths> tags, give "
    "a numbered list of at least 4 key reasons why this paper should potentially be accepted to the conference. "
    "For each reason, use sub-bullet points to provide detailed arguments and evidence from the paper to support "
    "that reason.\n\n"
    "Then, inside <weaknesses> tags, give a numbered list of at least 4 key reasons why this paper should "
    "potentially be rejected from the conference. Again, for each reason, use sub-bullet points to provide "
    "detailed arguments and evidence from the paper to support that reason.\n\n"
    "After weighing the reasons for and against, think of some open questions you have about the work. List "
    "your questions inside <questions> tags.\n\n"
    "Remember, as a reviewer your job is to rigorously evaluate the strengths and weaknesses of the work and to "
    "provide critical but constructive feedback to the authors. Be thorough, specific and detailed in your "
    "arguments and feedback. Highlight both the positives and negatives you see, and justify your points "
    "carefully with reference to the content of the paper."
)


@dataclass(frozen=True)
class BuiltinTemplate:
    slug: str
    name: str
    system: str
    user: str
    description: str


BUILTIN_TEMPLATES = (
    BuiltinTemplate(
        "gre-bench-review",
        "GRE-bench peer review (GEM, C.3)",
        GRE_BENCH_REVIEW_SYSTEM,
        "{source}",
        "The review prompt of GEM's Appendix C.3; the user turn is the prompt's source (the paper's text).",
    ),
    BuiltinTemplate(
        "answer",
        "Answer the prompt",
        "",
        "{prompt}{hints}",
        "The prompt as it is; at hint tiers the hints follow it.",
    ),
)


def placeholders_in(text: str) -> list[str]:
    """The field names of a template text, in order; ValueError for a malformed one."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if name == "" or name.isdigit():
            raise ValueError("a field needs a name, e.g. {prompt}; write {{ and }} for literal braces.")
        if spec or conversion or not name.isidentifier():
            raise ValueError(
                f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}} "
                "is not a plain placeholder: write a name only, e.g. {prompt}."
            )
        names.append(name)
    return names


def check_template(system: str, user: str) -> list[str]:
    """Every problem with a template, as sentences; empty when it can be saved."""
    errors = []
    for label, text in (("System text", system), ("User text", user)):
        try:
            names = placeholders_in(text)
        except ValueError as error:
            errors.append(f"{label}: {error}")
            continue
        unknown = sorted({n for n in names if n not in PLACEHOLDERS})
        if unknown:
            known = ", ".join("{" + n + "}" for n in PLACEHOLDERS)
            errors.append(f"{label}: unknown placeholder {', '.join('{' + n + '}' for n in unknown)}; use {known}.")
    if not user.strip():
        errors.append("User text: it is what the candidate answers, so it cannot be empty.")
    return errors


def hints_block(hints: Sequence[str]) -> str:
    if not hints:
        return ""
    lines = [f"Hint {n}: {hint.strip()}" for n, hint in enumerate(hints, start=1)]
    return "\n\nHints:\n" + "\n".join(lines)


def render_messages(system: str, user: str, fields: Mapping[str, str], hints: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages for one prompt at one tier (`hints` = the first t hints)."""
    values = {name: fields.get(name, "") or "" for name in PLACEHOLDERS}
    values["hints"] = hints_block(hints)
    user_text = user.format(**values)
    if hints and "hints" not in placeholders_in(user) and "hints" not in placeholders_in(system):
        user_text += values["hints"]
    messages = [{"role": "system", "content": system.format(**values)}] if system.strip() else []
    return [*messages, {"role": "user", "content": user_text}]
