"""An offline, deterministic judge that is not a language model.

It reads the sections of a judge prompt (see evalhub.core.prompts.sections), scores each
submission from simple features — closeness to the reference answer when there is one,
length, structure, refusals — and answers in the judge format: a short justification, then
the verdict alone on the last line. Variants weigh the features differently so that a panel
of heuristic agents can disagree; in discussion rounds an agent whose own margin is small
moves to the majority of the other agents. It lets the quickstart and the tests run with no
key and no weights, and it always says what it is.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from evalhub.core.privileged.graded import RESPONSE_A, RESPONSE_B
from evalhub.core.prompts import sections as ps
from evalhub.core.prompts.judges import GEVAL_ANSWER_CUE
from evalhub.core.scaleeval.debate import JUDGING_INSTRUCTIONS, parse_verdict
from evalhub.core.text.features import (
    fluency_score,
    is_refusal,
    length_score,
    order_score,
    overlap_f1,
    structure_score,
    words,
)
from evalhub.llm.base import Sampling
from evalhub.llm.providers.offline import OfflineChatClient
from evalhub.llm.types import Completion, Message, RequestRejected


@dataclass(frozen=True)
class Weights:
    reference: float
    length: float
    structure: float
    tie_margin: float = 0.03
    yield_margin: float = 0.08  # in discussion, follow the majority when own margin is below this


VARIANTS = {
    "balanced": Weights(reference=0.5, length=0.3, structure=0.2),
    "reference": Weights(reference=0.8, length=0.1, structure=0.1),
    "detail": Weights(reference=0.2, length=0.5, structure=0.3),
    "concise": Weights(reference=0.6, length=-0.2, structure=0.1),
}
_SPEAKER = re.compile(r"you are Speaker (\d+)")
# YESciEval's rubric prompts (the `yescieval` package's): the user prompt's tagged parts, and the
# characteristic the system prompt names (the key its JSON answer goes under).
SYNTHESIS = "scientific-synthesis"
_YESCIEVAL_TAG = re.compile(
    r"<(scientific-synthesis(?:-[AB])?|research-question|paper-titles-and-abstracts)>\n?(.*?)\n?</\1>", re.DOTALL
)
_CHARACTERISTIC = re.compile(r"<Evaluation-Characteristic>\s*(?:\d+\.\s*)?(\w+)\s*:")


def _characteristic(system: str) -> str:
    """The key the answer goes under: the characteristic the system prompt names, or a neutral one (a
    rubric of one's own may name none; "rating" would read as the rating itself)."""
    found = _CHARACTERISTIC.search(system)
    return found.group(1) if found else "Characteristic"


_SPEAKER_SECTION = re.compile(r"^Speaker (\d+)'s (?:Initial Evaluation|Discussion - Round (\d+))$")


def _section_starting(sections: dict[str, str], title: str) -> str:
    """A section by its title, also when a note follows it (privileged sections carry one)."""
    return next((body for name, body in sections.items() if name == title or name.startswith(f"{title} (")), "")


def other_speakers_verdicts(prompt: str, sections: dict[str, str]) -> list[int]:
    """The latest verdict of every other speaker in a ScaleEval discussion prompt."""
    me = _SPEAKER.search(prompt)
    latest: dict[int, tuple[int, str]] = {}
    for title, body in sections.items():
        match = _SPEAKER_SECTION.match(title)
        if match and (me is None or match.group(1) != me.group(1)):
            speaker, round_number = int(match.group(1)), int(match.group(2) or 0)
            if speaker not in latest or round_number >= latest[speaker][0]:
                latest[speaker] = (round_number, body)
    verdicts = [parse_verdict(body) for _, body in latest.values()]
    return [v for v in verdicts if v is not None]


class HeuristicJudge(OfflineChatClient):
    provider = "heuristic"

    def __init__(self, model: str = "balanced", **options: Any) -> None:
        if model not in VARIANTS:
            raise ValueError(f"unknown heuristic variant {model!r}; choose from {', '.join(VARIANTS)}.")
        super().__init__(model, **options)
        self.weights = VARIANTS[model]

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        tagged = dict(_YESCIEVAL_TAG.findall(prompt))
        sections = ps.parse_sections(prompt)
        if SYNTHESIS in tagged or (f"{SYNTHESIS}-A" in tagged and f"{SYNTHESIS}-B" in tagged):
            text = self._rubric(tagged, _characteristic(system))
        elif ps.SUBMISSION_1 in sections and ps.SUBMISSION_2 in sections:
            weights, followed = _following_examples(self.weights, messages)
            if not followed:
                weights, followed = _following_instructions(weights, sections)
            text = self._compare(sections, other_speakers_verdicts(prompt, sections), weights, followed)
        elif RESPONSE_A in sections and RESPONSE_B in sections:
            text = self._grade(sections)
        elif ps.RESPONSE in sections:
            text = self._rate(sections)
        elif GEVAL_ANSWER_CUE in prompt:
            text = self._geval(prompt)
        else:
            raise RequestRejected(self.provider, self.model, "the heuristic judge only judges; it writes no responses")
        return self.offline_completion(prompt, text)

    def score(self, response: str, reference: str, weights: Weights | None = None) -> tuple[float, str]:
        """A score in [0, 1]: the features' mean weighted by |weight|, a negative weight counting the
        feature's complement (the 'concise' variant prefers short answers); without a reference its
        weight is left out of the mean. A refusal loses 0.5 (not below 0)."""
        w = weights or self.weights
        features = {"length": length_score(response), "structure": structure_score(response)}
        weighted = [(w.length, features["length"]), (w.structure, features["structure"])]
        if reference:
            features["reference overlap"] = overlap_f1(response, reference)
            weighted.append((w.reference, features["reference overlap"]))
        total_weight = sum(abs(weight) for weight, _ in weighted)
        total = sum(abs(weight) * (value if weight >= 0 else 1 - value) for weight, value in weighted)
        total = total / total_weight if total_weight else 0.0
        if is_refusal(response):
            features["refusal"] = 1.0
            total = max(0.0, total - 0.5)
        shown = ", ".join(f"{name} {value:.2f}" for name, value in features.items())
        return total, shown

    def _header(self) -> str:
        return f"Heuristic judge ('{self.model}' weighting; not a language model)."

    def _compare(self, sections: dict[str, str], others: list[int], weights: Weights, followed: str = "") -> str:
        reference = _section_starting(sections, ps.REFERENCE_ANSWER)
        (s1, f1), (s2, f2) = (
            self.score(sections[ps.SUBMISSION_1], reference, weights),
            self.score(sections[ps.SUBMISSION_2], reference, weights),
        )
        margin = s1 - s2
        verdict = 0 if abs(margin) < weights.tie_margin else (1 if margin > 0 else 2)
        lines = [self._header(), *([followed] if followed else [])]
        lines += [f"Submission 1: {f1} → {s1:.2f}.", f"Submission 2: {f2} → {s2:.2f}."]
        if others:
            majority, count = Counter(others).most_common(1)[0]
            if majority != verdict and abs(margin) < weights.yield_margin and count > len(others) / 2:
                lines.append(
                    f"My margin ({abs(margin):.2f}) is small and most other evaluators chose {majority}; I agree."
                )
                verdict = majority
        lines.append("Neither is clearly better." if verdict == 0 else f"Submission {verdict} is better.")
        lines.append(str(verdict))
        return "\n".join(lines)

    def _grade(self, sections: dict[str, str]) -> str:
        """Figure 8's graded verdict: a margin past three tie margins is "significantly" better."""
        reference = _section_starting(sections, ps.REFERENCE_ANSWER)
        (s1, f1), (s2, f2) = (self.score(sections[RESPONSE_A], reference), self.score(sections[RESPONSE_B], reference))
        margin, tie = s1 - s2, self.weights.tie_margin
        relation = "=" if abs(margin) < tie else ">>" if abs(margin) >= 3 * tie else ">"
        verdict = "A = B" if relation == "=" else f"A {relation} B" if margin > 0 else f"B {relation} A"
        lines = [self._header(), f"Response A: {f1} → {s1:.2f}.", f"Response B: {f2} → {s2:.2f}."]
        return "\n".join([*lines, f"My final verdict is: [[{verdict}]]."])

    def quality(self, text: str, context: str) -> float:
        """0..1 for one text read alone (DHP / YESciEval): fluency, sentence order, and — when the
        prompt gives a source — how much of the text the source supports."""
        w = self.weights
        parts = [(0.45, fluency_score(text)), (0.25, order_score(text)), (0.1 * max(w.length, 0.1), length_score(text))]
        if context:
            parts.append((0.3 * max(w.reference, 0.1), _support(text, context)))
        total = sum(weight * value for weight, value in parts) / sum(weight for weight, _ in parts)
        return max(0.0, total - (0.5 if is_refusal(text) else 0.0))

    def _geval(self, prompt: str) -> str:
        """DHP's G-Eval prompt asks for the score only: a 1–5 score with one decimal, alone."""
        body = prompt.split(GEVAL_ANSWER_CUE, 1)[0].rstrip()
        blocks = body.split("\n\n")
        # The text is the last block after its "Summary:"-style title; the source (if any) comes before it.
        title_at = max((i for i, b in enumerate(blocks) if re.fullmatch(r"[A-Z][\w ]{1,40}:", b.strip())), default=-1)
        text = "\n\n".join(blocks[title_at + 1 :]) if title_at >= 0 else blocks[-1]
        source_at = max(
            (i for i, b in enumerate(blocks[:title_at]) if re.fullmatch(r"[A-Z][\w ]{1,40}:", b.strip())), default=-1
        )
        source = "\n\n".join(blocks[source_at + 1 : title_at]) if source_at >= 0 else ""
        return f"{1 + 4 * self.quality(text, source):.1f}"

    def _rubric(self, tagged: dict[str, str], name: str) -> str:
        """A YESciEval rubric's prompt (the package's tags) asks for JSON {name: {rating, rationale}}, or
        for a pair {name: {ResponseA: …, ResponseB: …}}: each synthesis rated by fluency, order and the
        share of its sentences the question and papers support (what off-topic additions lower)."""
        context = tagged.get("research-question", "") + "\n" + tagged.get("paper-titles-and-abstracts", "")
        if SYNTHESIS in tagged:
            return json.dumps({name: self._rubric_rating(tagged[SYNTHESIS], context)})
        pair = {f"Response{side}": self._rubric_rating(tagged[f"{SYNTHESIS}-{side}"], context) for side in "AB"}
        return json.dumps({name: pair})

    def _rubric_rating(self, synthesis: str, context: str) -> dict[str, Any]:
        on_topic = _support(synthesis, context)
        quality = 0.3 * fluency_score(synthesis) + 0.2 * order_score(synthesis) + 0.5 * on_topic
        if is_refusal(synthesis):
            quality = max(0.0, quality - 0.5)
        rating = max(1, min(5, 1 + round(4 * quality)))
        rationale = f"{self._header()} Fluency, order and on-topic share ({on_topic:.2f}) give {quality:.2f}."
        return {"rating": rating, "rationale": rationale}

    def _rate(self, sections: dict[str, str]) -> str:
        score, features = self.score(sections[ps.RESPONSE], _section_starting(sections, ps.REFERENCE_ANSWER))
        rating = max(1, min(5, 1 + round(4 * max(0.0, min(1.0, score)))))
        return "\n".join([self._header(), f"Response: {features} → {score:.2f}.", str(rating)])


def _following_examples(weights: Weights, messages: list[Message]) -> tuple[Weights, str]:
    """The weights to judge with after the worked examples earlier in the conversation (a user turn
    with two submissions, then an assistant turn with a verdict), and a line saying what was followed.
    The one thing the heuristic learns from them is length: where most examples whose verdict picked
    one of two submissions of different lengths picked the shorter, length counts against a
    submission; where most picked the longer, for it. Without such examples nothing changes."""
    shorter = longer = 0
    for asked, answered in zip(messages, messages[1:], strict=False):
        if asked["role"] != "user" or answered["role"] != "assistant":
            continue
        sections = ps.parse_sections(asked["content"])
        verdict = parse_verdict(answered["content"])
        if ps.SUBMISSION_1 not in sections or ps.SUBMISSION_2 not in sections or verdict not in (1, 2):
            continue
        lengths = len(sections[ps.SUBMISSION_1]), len(sections[ps.SUBMISSION_2])
        if lengths[0] == lengths[1]:
            continue
        chose_longer = (verdict == 1) == (lengths[0] > lengths[1])
        longer += chose_longer
        shorter += not chose_longer
    if shorter == longer:
        return weights, ""
    prefer_short = shorter > longer
    length = -abs(weights.length) if prefer_short else abs(weights.length)
    preferred = "shorter" if prefer_short else "longer"
    said = f"Following {shorter + longer} worked example(s): people preferred the {preferred}."
    return replace(weights, length=length), said


_SHORTER = re.compile(r"\b(shorter|brief|briefer|concise|succinct)\b", re.IGNORECASE)
_LONGER = re.compile(r"\b(longer|detailed|thorough|fuller)\b", re.IGNORECASE)


def _following_instructions(weights: Weights, sections: dict[str, str]) -> tuple[Weights, str]:
    """The weights after a judge version's instructions (their own section): where they ask for the
    shorter (brief, concise) answer and not the longer (detailed, thorough), length counts against a
    submission; the other way round, for it. The one instruction the heuristic can follow."""
    instructions = sections.get(JUDGING_INSTRUCTIONS, "")
    shorter, longer = bool(_SHORTER.search(instructions)), bool(_LONGER.search(instructions))
    if shorter == longer:
        return weights, ""
    length = -abs(weights.length) if shorter else abs(weights.length)
    return replace(
        weights, length=length
    ), f"Following my instructions: the {'shorter' if shorter else 'longer'} answer."


def _support(text: str, context: str) -> float:
    """The share of the text's sentences whose content words (four letters or more) the context
    shares at least a quarter of."""
    known = {w for w in words(context) if len(w) > 3}
    sentences = [[w for w in words(s) if len(w) > 3] for s in re.split(r"(?<=[.!?])\s+", text)]
    sentences = [s for s in sentences if s]
    if not sentences or not known:
        return 0.0
    return sum(sum(w in known for w in s) >= len(s) / 4 for s in sentences) / len(sentences)
