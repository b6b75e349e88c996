"""Perturbations that degrade a text on purpose: DHP's hierarchy (DHP, Table 2 and Appendix D)
and YESciEval's subtle/extreme adversarial variants per rubric (YESciEval, Appendix B.3).

A registry maps a name to a `Perturbation` (level, rule- or LLM-based, the severities and the
parameter each severity uses). `apply(name, text, severity=…, seed=…, context=…)` returns a
`Perturbed` with the new text, the parameters used and what changed — or no text and the
reason, when the perturbation cannot apply or leaves the text as it was: such rows are
counted and excluded, never kept silently.

Every rule-based perturbation draws from a private `random.Random(seed)`. The `typo` package
reseeds and uses Python's global RNG; it runs under a lock with the global state saved and
restored, so runs repeat exactly and nobody else's randomness moves.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from evalhub.core.registry import Registry

Complete = Callable[[list[dict[str, str]]], str]  # chat messages → the LLM's answer

MINOR, MAJOR, SUBTLE, EXTREME = "minor", "major", "subtle", "extreme"


@dataclass(frozen=True)
class Perturbed:
    text: str | None
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # why there is no text, or what changed

    @property
    def ok(self) -> bool:
        return self.text is not None


def checked(original: str, out: str | None, params: dict[str, Any], change: str = "") -> Perturbed:
    """The common ending: an empty or unchanged output is a failure with its reason."""
    if out is None or not out.strip():
        return Perturbed(None, params, "the perturbation produced an empty text.")
    if out.strip() == original.strip():
        return Perturbed(None, params, "the perturbation left the text unchanged.")
    return Perturbed(out, params, change)


# --- text units -------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")


def split_sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def join_sentences(sentences: Sequence[str]) -> str:
    return " ".join(sentences)


# --- character level --------------------------------------------------------------


def delete_characters(text: str, k: int, rng: random.Random) -> Perturbed:
    """DHP (C, R) random deletions: k alphanumeric characters, positions drawn without replacement."""
    positions = [i for i, ch in enumerate(text) if ch.isalnum()]
    if not positions:
        return Perturbed(None, {"k": k}, "no alphanumeric characters to delete.")
    chosen = set(rng.sample(positions, min(k, len(positions))))
    out = "".join(ch for i, ch in enumerate(text) if i not in chosen)
    return checked(text, out, {"k": k, "deleted": len(chosen)}, f"deleted {len(chosen)} characters")


_global_rng_lock = threading.Lock()
TYPO_KINDS = ("char_swap", "missing_char", "extra_char", "nearby_char", "similar_char", "repeated_char")


@contextmanager
def isolated_global_random() -> Iterator[None]:
    """Run code that seeds and draws from Python's global RNG without disturbing anyone else's draws."""
    with _global_rng_lock:
        state = random.getstate()
        try:
            yield
        finally:
            random.setstate(state)


def add_typos(text: str, k: int, rng: random.Random) -> Perturbed:
    """DHP (C, R) random typos with the `typo` package: k errors, each of a kind drawn from `rng`."""
    from typo import StrErrer

    kinds = [rng.choice(TYPO_KINDS) for _ in range(k)]
    with isolated_global_random():
        errer = StrErrer(text, seed=rng.randrange(2**32))  # reseeds the global RNG, restored on exit
        for kind in kinds:
            errer = getattr(errer, kind)()
        out = errer.result
    return checked(text, out, {"k": k, "kinds": kinds}, f"{k} typos")


# --- word level -------------------------------------------------------------------


def delete_words(text: str, k: int, rng: random.Random) -> Perturbed:
    """DHP (W, R): delete k continuous words at a random place."""
    words = list(_WORD.finditer(text))
    if len(words) <= 1:
        return Perturbed(None, {"k": k}, "too few words to delete some.")
    k = min(k, len(words) - 1)
    start = rng.randrange(len(words) - k + 1)
    cut_from, cut_to = words[start].start(), words[start + k - 1].end()
    out = (text[:cut_from] + text[cut_to:].lstrip(" ")).strip()
    return checked(text, out, {"k": k, "start_word": start}, f"deleted words {start + 1}–{start + k}")


# --- sentence level ---------------------------------------------------------------


def reorder_sentences(text: str, k: int | None, rng: random.Random) -> Perturbed:
    """DHP (S, R): shuffle k sentences among their positions (k None: all), so the order changes."""
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return Perturbed(None, {"k": k}, "a single sentence cannot be reordered.")
    count = len(sentences) if k is None else min(k, len(sentences))
    positions = sorted(rng.sample(range(len(sentences)), count))
    picked = [sentences[p] for p in positions]
    shuffled = picked[:]
    for _ in range(20):  # a derangement where possible: the same order is not a perturbation
        rng.shuffle(shuffled)
        if shuffled != picked:
            break
    out = sentences[:]
    for position, sentence in zip(positions, shuffled, strict=True):
        out[position] = sentence
    return checked(text, join_sentences(out), {"k": count, "positions": positions}, "sentences reordered")


def replace_last_sentence(text: str, replacement: str) -> str:
    sentences = split_sentences(text)
    return join_sentences([*sentences[:-1], replacement.strip()])


def pick_other(others: Sequence[str], rng: random.Random) -> tuple[int, str] | None:
    candidates = [(i, t) for i, t in enumerate(others) if t and t.strip()]
    return rng.choice(candidates) if candidates else None


# --- YESciEval connectors -----------------------------------------------------------

# Logical connectors removed by the integration attacks (YESciEval, B.3: "however", "therefore"…).
CONNECTORS = (
    "however",
    "therefore",
    "moreover",
    "furthermore",
    "in addition",
    "additionally",
    "consequently",
    "thus",
    "hence",
    "nevertheless",
    "nonetheless",
    "in contrast",
    "conversely",
    "similarly",
    "likewise",
    "meanwhile",
    "for example",
    "for instance",
    "in particular",
    "specifically",
    "as a result",
    "on the other hand",
    "in summary",
    "overall",
    "finally",
)
_CONNECTOR = re.compile(
    r"(?:(?<=^)|(?<=[.!?;]\s)|(?<=,\s))\b(" + "|".join(re.escape(c) for c in CONNECTORS) + r")\b,?\s*", re.IGNORECASE
)


def remove_connectors(text: str, first_only: bool) -> Perturbed:
    found = list(_CONNECTOR.finditer(text))
    if not found:
        return Perturbed(None, {}, "no logical connector to remove.")
    removed, out, last = [], [], 0
    for match in found[:1] if first_only else found:
        out.append(text[last : match.start()])
        rest = text[match.end() : match.end() + 1]
        at_sentence_start = match.start() == 0 or text[: match.start()].rstrip().endswith((".", "!", "?"))
        if at_sentence_start and rest:
            out.append(rest.upper())  # "However, the data…" → "The data…"
            last = match.end() + 1
        else:
            last = match.end()
        removed.append(match.group(1))
    out.append(text[last:])
    return checked(text, "".join(out), {"removed": removed}, f"removed {', '.join(removed)}")


# --- the registry -------------------------------------------------------------------


@dataclass(frozen=True)
class Perturbation:
    name: str
    label: str
    family: str  # "dhp" or "yescieval"
    level: str  # C, W or S (YESciEval's attacks are sentence-level edits, recorded as S)
    llm: bool
    severities: tuple[str, ...]
    run: Callable[..., Perturbed]
    rubric: str = ""  # the YESciEval rubric it targets
    description: str = ""
    # or every YESciEval rubric of this family (a `yescieval` folder; evalhub.core.yescieval.rubrics.targets)
    rubric_family: str = ""


REGISTRY: Registry[Perturbation] = Registry(
    "perturbation",
    docs="extending/perturbations.md",
    unknown=ValueError,
    check=lambda name, p: "" if isinstance(p, Perturbation) and p.name == name else "not a Perturbation of this name",
)

# DHP, Table 2: k per severity for each dataset shape; "default" when the shape is not named.
DHP_K: dict[str, dict[str, tuple[int | None, int | None]]] = {
    "random_deletions": {
        "summeval": (10, 50),
        "sumpubmed": (20, 100),
        "story": (5, 5),
        "qa": (5, 25),
        "translation": (10, 50),
        "default": (10, 50),
    },
    "random_typos": {
        "summeval": (10, 50),
        "sumpubmed": (20, 100),
        "story": (5, 5),
        "qa": (5, 25),
        "translation": (10, 50),
        "default": (10, 50),
    },
    "random_word_deletions": {"translation": (5, 25), "default": (5, 25)},
    "reordering": {"default": (2, None)},  # k = all for major
}


def k_for(name: str, severity: str, shape: str = "default") -> int | None:
    table = DHP_K[name]
    minor, major = table.get(shape, table["default"])
    return minor if severity == MINOR else major


def register(perturbation: Perturbation) -> Perturbation:
    REGISTRY.add(perturbation.name, perturbation)
    return perturbation


def apply(
    name: str,
    text: str,
    *,
    severity: str,
    seed: int = 0,
    shape: str = "default",
    k: int | None = None,
    context: dict[str, Any] | None = None,
    complete: Complete | None = None,
) -> Perturbed:
    """Perturb `text`. `context` carries what some perturbations draw on: `others` (texts of other
    items of the same benchmark), `same_domain` (sentences from other answers of the domain),
    `wrong_ending`, and the configurable `sports`, `blog` and `tweet` sentences."""
    perturbation = REGISTRY[name]
    if severity not in perturbation.severities:
        raise ValueError(f"{name} has severities {', '.join(perturbation.severities)}, not {severity!r}.")
    if perturbation.llm and complete is None:
        return Perturbed(None, {}, "this perturbation needs an LLM; none was configured.")
    if not text.strip():
        return Perturbed(None, {}, "the text is empty.")
    rng = random.Random(seed)
    result = perturbation.run(
        text, severity=severity, rng=rng, shape=shape, k=k, context=context or {}, complete=complete
    )
    return Perturbed(result.text, {"severity": severity, "seed": seed, **result.params}, result.note)


def _rule(name: str, label: str, level: str, severities: tuple[str, ...], function: Callable[..., Perturbed]) -> None:
    register(Perturbation(name, label, "dhp", level, False, severities, function))


def _counted(name: str, label: str, level: str, operation: Callable[[str, Any, random.Random], Perturbed]) -> None:
    """A minor/major rule that applies `operation(text, k, rng)` k times, with DHP's k for the
    severity and dataset shape (Table 2) unless the caller gives one."""
    _rule(
        name,
        label,
        level,
        (MINOR, MAJOR),
        lambda text, severity, rng, shape, k, **_: operation(text, k or k_for(name, severity, shape), rng),
    )


_counted("random_deletions", "Random character deletions", "C", delete_characters)
_counted("random_typos", "Random typos", "C", add_typos)
_counted("random_word_deletions", "Random continuous word deletion", "W", delete_words)
_counted("reordering", "Sentence reordering", "S", reorder_sentences)


def _random_ending(text: str, rng: random.Random, context: Mapping[str, Any], **_: Any) -> Perturbed:
    picked = pick_other([split_sentences(t)[-1] if split_sentences(t) else "" for t in context.get("others", ())], rng)
    if picked is None:
        return Perturbed(None, {}, "no other item to take an ending from.")
    index, ending = picked
    return checked(text, replace_last_sentence(text, ending), {"other_index": index}, "ending replaced")


def _wrong_ending(text: str, context: Mapping[str, Any], **_: Any) -> Perturbed:
    wrong = context.get("wrong_ending_sentence", "")
    if not wrong.strip():
        return Perturbed(None, {}, "the item has no wrong ending in the dataset.")
    return checked(text, replace_last_sentence(text, wrong), {}, "ending replaced with the dataset's wrong one")


def _random_answer(text: str, rng: random.Random, context: Mapping[str, Any], **_: Any) -> Perturbed:
    picked = pick_other(context.get("others", ()), rng)
    if picked is None:
        return Perturbed(None, {}, "no other item to take an answer from.")
    index, answer = picked
    return checked(text, answer, {"other_index": index}, "answer replaced")


_rule("random_ending_sentence", "Random ending sentence", "S", (MAJOR,), _random_ending)
_rule("wrong_ending_sentence", "Wrong ending sentence", "S", (MAJOR,), _wrong_ending)
_rule("random_answer", "Random answer", "S", (MAJOR,), _random_answer)


# DHP, Appendix D: LLM perturbations as Auto-CoT adjustment prompts. The paper prints the minor
# fictional-named-entities prompt; the others follow it with Table 2's descriptions.
ADJUSTMENTS = {
    ("fictional_named_entities", MINOR): (
        "Please substitute only one critical named entity within the {unit} (e.g., a name, a location, a specific "
        "number, a technical term, etc.) with a fictional counterpart.",
        [
            "Identify the critical named entity within the {unit}. This could be a person's name, a location, a "
            "specific number, or any other specific detail that is crucial to the {unit}.",
            "Create a fictional counterpart for the identified entity. This could be a fictional name, a fictional "
            "location, a fictional number, a fictional technical term etc. Make sure that the fictional counterpart is "
            "appropriate and fits within the context of the {unit}.",
            "Replace the identified entity with its fictional counterpart in the {unit}. Ensure that the replacement "
            "is grammatically correct and maintains the overall meaning and flow of the {unit}.",
            "Review the adjusted {unit} to ensure that it still makes sense and conveys the main points, despite the "
            "change in one critical named entity.",
        ],
    ),
    ("fictional_named_entities", MAJOR): (
        "Please substitute several named entities within the {unit} (e.g., names, locations, specific numbers, "
        "technical terms, etc.) with fictional counterparts.",
        [
            "Identify the named entities within the {unit}: names, locations, specific numbers, technical terms and "
            "other specific details.",
            "Create a fictional counterpart for each identified entity that fits within the context of the {unit}.",
            "Replace the identified entities with their fictional counterparts. Ensure the replacements are "
            "grammatically correct and keep the flow of the {unit}.",
            "Review the adjusted {unit} to ensure that it still reads naturally despite the changed entities.",
        ],
    ),
    ("grammatical_errors", MINOR): (
        "Please modify the {unit} to create one grammatical error, such as subject-verb disagreement, noun-pronoun "
        "disagreement, incorrect verb tense, misuse of preposition, or a sentence fragment.",
        [
            "Read the {unit} and choose one place where a grammatical error can be introduced.",
            "Introduce exactly one grammatical error of the listed kinds at that place.",
            "Leave everything else in the {unit} unchanged.",
            "Review the adjusted {unit} to ensure it contains the one error and keeps its meaning.",
        ],
    ),
    ("grammatical_errors", MAJOR): (
        "Please modify the {unit} to create two or more grammatical errors, such as subject-verb disagreement, "
        "noun-pronoun disagreement, incorrect verb tense, misuse of preposition, and sentence fragment, etc.",
        [
            "Read the {unit} and choose several places where grammatical errors can be introduced.",
            "Introduce two or more grammatical errors of the listed kinds, of different kinds where possible.",
            "Leave the meaning of the {unit} otherwise unchanged.",
            "Review the adjusted {unit} to ensure it contains the errors and still conveys its content.",
        ],
    ),
    ("rewriting_and_insertion", MINOR): (
        "Please select one sentence from the {unit}, rephrase it, and insert the rewritten version immediately "
        "after the original sentence.",
        [
            "Choose one sentence of the {unit}.",
            "Rephrase it with different words but the same meaning.",
            "Insert the rephrased sentence immediately after the original one; change nothing else.",
            "Review the adjusted {unit}: it now says that sentence twice in different words.",
        ],
    ),
    ("rewriting_and_insertion", MAJOR): (
        "Please select several sentences from the {unit}, rephrase them, and insert each rewritten version "
        "immediately after its original sentence.",
        [
            "Choose two or more sentences of the {unit}.",
            "Rephrase each with different words but the same meaning.",
            "Insert each rephrased sentence immediately after its original; change nothing else.",
            "Review the adjusted {unit}: those sentences are now said twice in different words.",
        ],
    ),
}


def adjustment_prompt(name: str, severity: str, text: str, unit: str = "summary") -> list[dict[str, str]]:
    """The DHP Appendix D prompt for an LLM perturbation, for a `unit` (summary, answer, ending…)."""
    adjustment, steps = ADJUSTMENTS[(name, severity)]
    numbered = "\n\n".join(f"{n}. {step.format(unit=unit)}" for n, step in enumerate(steps, 1))
    title = unit.capitalize()
    body = (
        f"You will be given one {unit}. Your task is to adjust the {unit} by implementing a specific change.\n\n"
        "Please make sure you read and understand these instructions carefully.\n\n"
        f"Adjustment: {adjustment.format(unit=unit)}\n\nAdjustment Steps:\n\n{numbered}\n\n"
        f"{title}:\n\n{text}\n\nRevised {title}:"
    )
    return [{"role": "user", "content": body}]


def _llm(name: str) -> Callable[..., Perturbed]:
    def run(
        text: str, severity: str, complete: Callable[..., str] | None, context: Mapping[str, Any], **_: Any
    ) -> Perturbed:
        unit = context.get("unit", "summary")
        if complete is None:
            return Perturbed(None, {}, "needs an LLM; none was configured.")
        out = complete(adjustment_prompt(name, severity, text, unit)).strip()
        out = re.sub(rf"^Revised {unit}:\s*", "", out, flags=re.IGNORECASE)
        return checked(text, out, {"unit": unit}, "rewritten by the LLM")

    return run


for _name, _label in (
    ("fictional_named_entities", "Fictional named entities"),
    ("grammatical_errors", "Grammatical errors"),
    ("rewriting_and_insertion", "Rewriting and insertion"),
):
    register(
        Perturbation(
            _name, _label, "dhp", "W" if _name != "rewriting_and_insertion" else "S", True, (MINOR, MAJOR), _llm(_name)
        )
    )


# --- YESciEval, Appendix B.3 ---------------------------------------------------------

# The project's own off-topic sentences (configurable through `context`), one per source kind.
SPORTS = (
    "The home team clinched the title on Sunday with a late goal in stoppage time, sending the crowd into a frenzy."
)
BLOG = "Honestly, I've been meaning to write about this for ages, so grab a coffee and let's just dive right in!"
TWEET = "omg cannot believe this happened today lol #mondays #nofilter"


def _append(source: str) -> Callable[..., Perturbed]:
    def run(text: str, context: Mapping[str, Any], rng: random.Random, **_: Any) -> Perturbed:
        if source == "same_domain":
            picked = pick_other(context.get("same_domain", ()), rng)
            if picked is None:
                return Perturbed(None, {}, "no sentence from another answer of the same domain.")
            sentence = picked[1]
        else:
            sentence = context.get(source, {"sports": SPORTS, "blog": BLOG, "tweet": TWEET}[source])
        return checked(
            text, f"{text.rstrip()} {sentence.strip()}", {"appended": source}, f"appended a {source} sentence"
        )

    return run


def _drop_last(append_sports: bool) -> Callable[..., Perturbed]:
    def run(text: str, context: Mapping[str, Any], **_: Any) -> Perturbed:
        sentences = split_sentences(text)
        if len(sentences) < 2:
            return Perturbed(None, {}, "a single sentence: nothing to drop.")
        kept = sentences[:-1] + ([context.get("sports", SPORTS)] if append_sports else [])
        return checked(text, join_sentences(kept), {"dropped": sentences[-1]}, "dropped the last sentence")

    return run


def _swap_last_two(text: str, **_: Any) -> Perturbed:
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return Perturbed(None, {}, "a single sentence cannot be swapped.")
    return checked(text, join_sentences([*sentences[:-2], sentences[-1], sentences[-2]]), {}, "swapped the last two")


def _shuffle_all(text: str, rng: random.Random, **_: Any) -> Perturbed:
    return reorder_sentences(text, None, rng)


def redundancy_prompt(sentence: str) -> list[dict[str, str]]:
    return [
        {
            "role": "user",
            "content": "Rewrite the following sentence as a redundant, wordier version that repeats the same "
            "information in different words. Answer with the rewritten sentence only: no introduction, no comment."
            f"\n\nSentence: {sentence}",
        }
    ]


def _redundant(every: bool) -> Callable[..., Perturbed]:
    def run(text: str, complete: Callable[..., str] | None, **_: Any) -> Perturbed:
        if complete is None:
            return Perturbed(None, {}, "needs an LLM; none was configured.")
        sentences = split_sentences(text)
        targets = range(len(sentences)) if every else [len(sentences) - 1]
        out = []
        for index, sentence in enumerate(sentences):
            out.append(sentence)
            if index in targets:
                out.append(complete(redundancy_prompt(sentence)).strip())
        return checked(text, join_sentences(out), {"redundant_sentences": len(targets)}, "added redundant sentences")

    return run


RUBRIC_ATTACKS: dict[str, dict[str, tuple[Callable[..., Perturbed], bool]]] = {
    "relevancy": {SUBTLE: (_append("same_domain"), False), EXTREME: (_append("sports"), False)},
    "correctness": {SUBTLE: (_append("same_domain"), False), EXTREME: (_append("sports"), False)},
    "completeness": {SUBTLE: (_drop_last(False), False), EXTREME: (_drop_last(True), False)},
    "informativeness": {SUBTLE: (_append("same_domain"), False), EXTREME: (_append("sports"), False)},
    "integration": {
        SUBTLE: (lambda text, **_: remove_connectors(text, first_only=True), False),
        EXTREME: (lambda text, **_: remove_connectors(text, first_only=False), False),
    },
    "cohesion": {SUBTLE: (_swap_last_two, False), EXTREME: (_shuffle_all, False)},
    "coherence": {SUBTLE: (_append("same_domain"), False), EXTREME: (_append("sports"), False)},
    "readability": {SUBTLE: (_append("blog"), False), EXTREME: (_append("tweet"), False)},
    "conciseness": {SUBTLE: (_redundant(False), True), EXTREME: (_redundant(True), True)},
}

for _rubric, _attacks in RUBRIC_ATTACKS.items():
    for _severity, (_function, _needs_llm) in _attacks.items():
        register(
            Perturbation(
                f"{_rubric}_{_severity}",
                f"{_rubric.capitalize()} ({_severity})",
                "yescieval",
                "S",
                _needs_llm,
                (_severity,),
                _function,
                rubric=_rubric,
            )
        )


# --- The package's later rubric families: evalhub's own attacks -------------------------------
# The paper's Appendix B.3 attacks the nine rubrics only. For the rubrics the `yescieval` package added
# since, evalhub removes what a family rewards, rule-based and deterministic: for breadth, the answer's
# later aspects (subtle: its last sentence; extreme: all but its first); for depth, rigor, gap
# identification and novelty, the sentences carrying the family's cue words (subtle: the first such
# sentence; extreme: every one). A copy of an answer with no such sentence is reported and left out.
FAMILY_CUES = {
    "depth": r"because|therefore|thus|hence|due to|as a result|consequently|lead(?:s)? to|led to|cause[sd]?"
    r"|mechanism\w*|via|through|by which|before|after|until|during|(?:1[89]|20)\d\d",
    "rigor": r"may|might|could|likely|suggest\w*|uncertain\w*|unclear|approximately|confidence|interval"
    r"|significan\w*|\d+(?:[.,]\d+)*",  # a figure (a percentage's number too)
    "gap": r"gaps?|unknown|unclear|remain\w*|future|lack\w*|limited|understudied|open question\w*",
    "innovation": r"novel\w*|new|first|state[- ]of[- ]the[- ]art|recent\w*|outperform\w*|breakthrough\w*|advance\w*",
}


def _keep_first(text: str, **_: Any) -> Perturbed:
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return Perturbed(None, {}, "a single sentence: nothing to drop.")
    return checked(text, sentences[0], {"dropped": len(sentences) - 1}, "kept the first sentence only")


def _drop_cued(family: str, every: bool) -> Callable[..., Perturbed]:
    cues = re.compile(rf"\b(?:{FAMILY_CUES[family]})\b", re.IGNORECASE)

    def run(text: str, **_: Any) -> Perturbed:
        sentences = split_sentences(text)
        cued = [index for index, sentence in enumerate(sentences) if cues.search(sentence)]
        if not cued:
            return Perturbed(None, {}, f"no sentence carries a {family} cue.")
        dropped = set(cued if every else cued[:1])
        kept = [sentence for index, sentence in enumerate(sentences) if index not in dropped]
        if not kept:
            return Perturbed(None, {}, f"every sentence carries a {family} cue: nothing would be left.")
        return checked(
            text, join_sentences(kept), {"dropped": len(dropped)}, f"dropped {len(dropped)} {family} sentence(s)"
        )

    return run


FAMILY_ATTACKS: dict[str, dict[str, Callable[..., Perturbed]]] = {
    "breadth": {SUBTLE: _drop_last(False), EXTREME: _keep_first},
    **{family: {SUBTLE: _drop_cued(family, False), EXTREME: _drop_cued(family, True)} for family in FAMILY_CUES},
}

for _family, _family_attacks in FAMILY_ATTACKS.items():
    for _severity, _attack in _family_attacks.items():
        register(
            Perturbation(
                f"{_family}_{_severity}",
                f"{_family.capitalize()} rubrics ({_severity})",
                "yescieval",
                "S",
                False,
                (_severity,),
                _attack,
                rubric_family=_family,
            )
        )
