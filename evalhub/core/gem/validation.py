"""GEM's validation workflow (Algorithm 1): degradations and manipulations of a response.

Rule-based strategies are pure functions here; LLM-based ones say which prompt they need
and are finished by the caller through the model-access layer (GEM, Appendix D).

Sections (D.3.1): a review is split at heading lines — a line of at most 80 characters
that ends with ':' ("Summary Of The Paper:" and the other ICLR 2023 headings). Headings
are kept. Sentences end at '.', '?', '!' or a line break; inside each section the sentences
in odd positions (1st, 3rd, …) are kept and the even ones deleted, and every kept sentence
keeps the whitespace that followed it, so lists stay lists.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalhub.core.dhp.perturbations import Complete, Perturbed, checked
from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.registry import Registry

_HEADING = re.compile(r"^\s*[^\n.!?]{1,78}:\s*$")
_SENTENCE = re.compile(r"([^.!?\n]+(?:[.!?]+|(?=\n)|$))(\s*)")


@dataclass(frozen=True)
class Section:
    heading: str | None  # the heading line as written, or None before the first heading
    body: str


def split_sections(text: str) -> list[Section]:
    sections: list[Section] = []
    heading, lines = None, list[str]()
    for line in text.splitlines():
        if _HEADING.match(line):
            if heading is not None or any(part.strip() for part in lines):
                sections.append(Section(heading, "\n".join(lines)))
            heading, lines = line, []
        else:
            lines.append(line)
    sections.append(Section(heading, "\n".join(lines)))
    return sections


def join_sections(sections: Sequence[Section]) -> str:
    parts = []
    for section in sections:
        if section.heading is not None:
            parts.append(section.heading)
        if section.body.strip() or section.heading is None:
            parts.append(section.body)
    return "\n".join(parts).strip("\n")


def sentences(body: str) -> list[tuple[str, str]]:
    """(sentence, the whitespace after it), for every non-empty sentence of `body`."""
    return [(m.group(1).strip(), m.group(2)) for m in _SENTENCE.finditer(body) if m.group(1).strip()]


def _every_other(body: str, replacement: str | None) -> tuple[str, int]:
    kept, deleted = [], 0
    for index, (sentence, separator) in enumerate(sentences(body)):
        if index % 2 == 0:
            kept.append(sentence + (separator or " "))
        else:
            deleted += 1
            if replacement is not None:
                kept.append(replacement + (separator or " "))
    return "".join(kept).rstrip(), deleted


def delete_every_other_sentence(text: str, replacement: str | None = None) -> tuple[str, int]:
    """D.3.1 (and, with the placeholder, the first step of D.3.2). Returns (text, sentences removed)."""
    sections, total = [], 0
    for section in split_sections(text):
        body, deleted = _every_other(section.body, replacement)
        sections.append(Section(section.heading, body))
        total += deleted
    return join_sections(sections), total


# GEM, Appendix D.4.2: the fixed sentences put at the start of each ICLR 2023 section.
ELONGATION = {
    "summary of the paper": (
        "This section provides an overview of the key contributions, methodologies, and findings presented in the "
        "paper. It summarizes the main arguments and highlights the scope and significance of the research "
        "conducted. Specifically, "
    ),
    "strengths and weaknesses": (
        "In this section, I will discuss the strengths and weaknesses of the paper, focusing on its contributions to "
        "the field, methodological rigor, and areas where improvements could be made. The aim is to provide "
        "constructive feedback that can help enhance the quality of the work. This paper has several notable "
        "strengths, including {strengths}. However, there are some areas that could be improved, such as "
        "{weaknesses}. Specifically, I discuss the strengths and weaknesses of the paper as following.\n\n"
    ),
    "clarity, quality, novelty and reproducibility": (
        "I will evaluate the clarity of the paper's presentation, the quality of the research, the novelty of the "
        "findings, and the reproducibility of the experiments. This assessment will address whether the research is "
        "presented in a clear and coherent manner, offers new insights, and can be replicated based on the provided "
        "information. "
    ),
    "summary of the review": (
        "This summary encapsulates the main points of the review, reflecting on the paper's contributions, "
        "strengths, and areas for improvement. It provides a balanced overview of the paper's impact and offers "
        "final recommendations for the authors. "
    ),
}


def elongate(text: str, strengths: str, weaknesses: str) -> tuple[str, int]:
    """D.4.2: put the fixed sentences at the start of every known section. Returns (text, sections changed)."""
    sections, changed = [], 0
    for section in split_sections(text):
        key = (section.heading or "").strip().rstrip(":").strip().lower()
        lead = ELONGATION.get(key)
        if lead is None or not section.body.strip():
            sections.append(section)
            continue
        lead = lead.format(strengths=strengths.strip().rstrip("."), weaknesses=weaknesses.strip().rstrip("."))
        body = section.body.lstrip()
        sections.append(Section(section.heading, section.body[: len(section.body) - len(body)] + lead + body))
        changed += 1
    return join_sections(sections), changed


@dataclass(frozen=True)
class Source:
    """What a strategy derives from: the response, its prompt's abstract, responses to other tasks, a
    seed for whatever it draws, and a chat model for the strategies that need one."""

    text: str
    abstract: str
    others: Sequence[str]
    seed: int
    complete: Complete


def _sentence_deletion(source: Source) -> Perturbed:
    out, deleted = delete_every_other_sentence(source.text)
    return checked(source.text, out, {"sentences_deleted": deleted})


def _deletion_completion(source: Source) -> Perturbed:
    with_gaps, deleted = delete_every_other_sentence(source.text, gem_prompts.MISSING_SENTENCE)
    if not deleted:
        return Perturbed(None, {}, "nothing to delete: the response has a single sentence per section.")
    out = source.complete(gem_prompts.chat(gem_prompts.COMPLETION_SYSTEM, with_gaps))
    return checked(source.text, out, {"sentences_deleted": deleted})


def _abstract_only(source: Source) -> Perturbed:
    if not source.abstract.strip():
        return Perturbed(None, {}, "the prompt has no synopsis (abstract) to write a review from.")
    review = source.complete(gem_prompts.chat(gem_prompts.ABSTRACT_ONLY_SYSTEM, source.abstract))
    return checked(source.text, review, {})


def _random_replacement(source: Source) -> Perturbed:
    if not source.others:
        return Perturbed(None, {}, "no response to another task to replace it with.")
    index = random.Random(source.seed).randrange(len(source.others))  # a private RNG: nothing global is touched
    return checked(source.text, source.others[index], {"replacement_index": index})


def _llm_rephrase(source: Source) -> Perturbed:
    return checked(source.text, source.complete(gem_prompts.chat(gem_prompts.REPHRASE_SYSTEM, source.text)), {})


def _meaningless_elongation(source: Source) -> Perturbed:
    chat, text = gem_prompts.chat, source.text
    strengths = source.complete(chat(gem_prompts.key_points_system("strengths"), text))
    weaknesses = source.complete(chat(gem_prompts.key_points_system("weaknesses"), text))
    out, changed = elongate(text, strengths, weaknesses)
    if not changed:
        return Perturbed(None, {}, "no ICLR-style section headings to elongate.")
    return checked(text, out, {"sections_elongated": changed, "strengths": strengths, "weaknesses": weaknesses})


@dataclass(frozen=True)
class Strategy:
    """A strategy is declared with what derives its copy: one declared without it cannot be made (it
    was a branch of an if-chain, whose last branch a declared strategy with none of its own ran)."""

    name: str
    label: str
    kind: str  # "degradation" (should lower the score) or "manipulation" (should not raise it)
    needs_llm: bool
    section: str  # where the paper defines it
    derive: Callable[[Source], Perturbed]


def _is_declared(name: str, strategy: object) -> str:
    if not isinstance(strategy, Strategy) or strategy.name != name:
        return "not a Strategy of this name"
    return "" if callable(strategy.derive) else "declared without what derives its copy"


STRATEGIES: Registry[Strategy] = Registry(
    "GEM validation strategy",
    docs="extending/gem-strategies.md",
    what="validation strategy",
    unknown=ValueError,
    check=_is_declared,
    entries={
        s.name: s
        for s in (
            Strategy("sentence_deletion", "Sentence deletion", "degradation", False, "D.3.1", _sentence_deletion),
            Strategy(
                "deletion_completion", "Deletion & completion", "degradation", True, "D.3.2", _deletion_completion
            ),
            Strategy("abstract_only", "Abstract-only review", "degradation", True, "D.3.3", _abstract_only),
            Strategy("random_replacement", "Random replacement", "degradation", False, "A.4", _random_replacement),
            Strategy("llm_rephrase", "LLM rephrase", "manipulation", True, "D.4.1", _llm_rephrase),
            Strategy(
                "meaningless_elongation",
                "Meaningless elongation",
                "manipulation",
                True,
                "D.4.2",
                _meaningless_elongation,
            ),
        )
    },
)


def derive(
    strategy: str,
    text: str,
    *,
    abstract: str = "",
    others: Sequence[str] = (),
    seed: int = 0,
    complete: Complete | None = None,
) -> Perturbed:
    """Apply one strategy to `text`. `others` are responses to other tasks (random replacement);
    `complete` runs a chat prompt for the LLM-based strategies."""
    declared = STRATEGIES[strategy]
    if declared.needs_llm and complete is None:
        return Perturbed(None, {}, "needs an LLM for this strategy; none was configured.")
    return declared.derive(Source(text, abstract, others, seed, complete or _no_llm))


def _no_llm(messages: list[dict[str, str]]) -> str:
    raise AssertionError("a strategy that needs no LLM called one")  # derive checked needs_llm above
