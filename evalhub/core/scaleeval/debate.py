"""ScaleEval's multi-agent debate (ScaleEval, Section 4.1 and Appendix A.2), without I/O.

Round 0: every agent evaluates the pair independently. Rounds 1..D-1: each agent sees the
other agents' earlier evaluations and keeps or changes its verdict. The debate stops at
consensus; without consensus after the last round it goes to people.

Verdicts are relative to the order shown: 1 = submission 1 better, 2 = submission 2 better,
0 = neither. They are read strictly from the answer's last line; an answer without one is
asked again once with a reminder, then recorded as invalid — an invalid turn is no vote,
never a tie.

The engine (`run_debate`) takes an `ask` coroutine, so it runs against real providers,
scripted fakes or the offline heuristic alike, and it resumes from turns already done.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from evalhub.core.prompts import sections as ps
from evalhub.core.runs.usage import CallStats

UNANIMOUS, MAJORITY = "unanimous", "majority"
ALL_ROUNDS, LAST_ROUND = "all", "last"
USER = "User"
PRIVILEGED_NOTE = "visible to evaluators only; the submissions' authors never saw it"

# ScaleEval, Appendix A.2 (Table 7), "Initial Evaluation".
INITIAL_INSTRUCTIONS = (
    "Compare the two submissions based on the criteria above. Which one is better? First, provide a step-by-step "
    "explanation of your evaluation reasoning according to the criteria. Avoid any potential bias. Ensure that the "
    "order in which the submissions were presented does not affect your judgement. Keep your explanation strictly "
    'under 150 words. Afterwards, choose one of the following options:\n\nSubmission 1 is better: "1"\n\n'
    'Submission 2 is better: "2"\n\nNeither is better: "0"\n\nDirectly type in "1" or "2" or "0" (without quotes or '
    "punctuation) that corresponds to your reasoning. At the end, repeat just the number again by itself on a new line."
)
JUDGING_INSTRUCTIONS = "Judging Instructions"
INITIAL_CLOSING = (
    "You are evaluating two submissions for a particular question, using a specific set of criteria. Above is the data."
)
# ScaleEval, Appendix A.2 (Table 7), "Discussion Rounds".
DISCUSSION_OPENING = (
    "Always remember you are Speaker {speaker}. Review again your own previous evaluations/discussions first, then "
    "answer user's request from Speaker {speaker}'s perspective."
)
DISCUSSION_INSTRUCTIONS = (
    "Read the question, submissions, criteria, and evaluations above. First, explain your thoughts step-by-step "
    "about other speakers' evaluations. Second, explain your reasoning step-by-step regarding whether or not to "
    "change your original answer about which submission you think is better after considering other speakers' "
    "perspectives. Keep your reasoning strictly under 150 words. Afterwards, choose one of the following options:"
    '\n\nSubmission 1 is better: "1"\n\nSubmission 2 is better: "2"\n\nNeither is better: "0"\n\nDirectly type in '
    '"1" or "2" or "0" (without quotes or punctuation) that corresponds to your reasoning. At the end, repeat just '
    "the number again by itself on a new line."
)
FORMAT_REMINDER = (
    "Your answer did not end with a line containing only the number. Reply again with your reasoning, and on the "
    'last line write only "1", "2" or "0".'
)
# The last line is the verdict alone — also in quotes or markdown emphasis ("2", **1**, `0`) or after a
# label of words ("Verdict: 2", "Final answer: 1"); never a digit inside prose ("Submission 2 is …").
_WRAP = "*_`\"'“”‘’"
_LAST_LINE = re.compile(
    rf"^\s*(?:[{_WRAP}]*[A-Za-z][A-Za-z ]{{0,30}}:[{_WRAP}]*\s*)?[{_WRAP}]*\s*([012])\s*[{_WRAP}]*\s*$"
)


def parse_verdict(text: str) -> int | None:
    """The verdict on the last non-empty line: 0, 1 or 2 alone, quoted, emphasised or labelled."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    match = _LAST_LINE.match(lines[-1]) if lines else None
    return int(match.group(1)) if match else None


def shown_swapped(seed: int, key: str) -> bool:
    """Whether a pair is shown in reverse order: random per debate, reproducible from the seed."""
    return random.Random(f"{seed}:{key}").random() < 0.5


def consensus(verdicts: Sequence[int | None], rule: str = UNANIMOUS) -> int | None:
    """The agreed verdict, or None. Invalid turns (None) are votes for nothing."""
    if not verdicts:
        return None
    if rule == UNANIMOUS:
        first = verdicts[0]
        return first if first is not None and all(v == first for v in verdicts) else None
    if rule == MAJORITY:
        counts = Counter(v for v in verdicts if v is not None)
        if counts:
            value, count = counts.most_common(1)[0]
            if count * 2 > len(verdicts):  # more than half of all agents, invalid ones included
                return value
        return None
    raise ValueError(f"unknown consensus rule {rule!r}; use {UNANIMOUS!r} or {MAJORITY!r}.")


@dataclass(frozen=True)
class DebateSetup:
    question: str
    submission_1: str  # as shown
    submission_2: str
    criteria: str
    agents: int = 3
    rounds: int = 3  # D: one independent round, then D-1 discussion rounds
    rule: str = UNANIMOUS
    history: str = ALL_ROUNDS
    privileged: Mapping[str, str] = field(default_factory=dict)  # title → text; empty when off
    instructions: str = ""  # a judge version's own instructions (evalhub.core.alignment), after the criteria

    def __post_init__(self) -> None:
        if self.agents < 1 or self.rounds < 1:
            raise ValueError("a debate needs at least one agent and one round.")
        if self.history not in (ALL_ROUNDS, LAST_ROUND):
            raise ValueError(f"history must be {ALL_ROUNDS!r} or {LAST_ROUND!r}.")
        consensus([], self.rule)  # validates the rule name


@dataclass(frozen=True)
class Turn:
    agent: int  # 0-based; shown to agents as Speaker agent+1
    round: int
    text: str
    verdict: int | None
    reasked: bool = False
    extra: CallStats = field(default_factory=CallStats)  # tokens, latency… from `ask`
    rejected: str = ""  # the first answer, when it had no verdict and was asked again

    @property
    def valid(self) -> bool:
        return self.verdict is not None


@dataclass
class DebateOutcome:
    verdict: int | None  # None: no consensus, goes to people
    rounds_used: int
    turns: list[Turn]

    @property
    def resolved(self) -> bool:
        return self.verdict is not None


def _data_sections(setup: DebateSetup) -> list[str]:
    parts = [
        ps.section(ps.QUESTION, setup.question),
        ps.section(ps.SUBMISSION_1, setup.submission_1),
        ps.section(ps.SUBMISSION_2, setup.submission_2),
        ps.section(ps.CRITERIA, setup.criteria),
    ]
    if setup.instructions:  # not ScaleEval's: only a judge version that sets them adds this section
        parts.append(ps.section(JUDGING_INSTRUCTIONS, setup.instructions))
    # Privileged information: its own marked sections, only when the run turns it on.
    parts += [ps.section(f"{title} ({PRIVILEGED_NOTE})", text) for title, text in setup.privileged.items() if text]
    return parts


def initial_prompt(setup: DebateSetup) -> list[dict[str, str]]:
    # The data, then the request in its own [User] section (ScaleEval's {user_prompt} slot), so
    # no section's text runs into the instructions.
    body = "\n".join([*_data_sections(setup), ps.section(USER, INITIAL_INSTRUCTIONS), INITIAL_CLOSING])
    return [{"role": "user", "content": body}]


def discussion_prompt(
    setup: DebateSetup, agent: int, round_number: int, earlier: Sequence[Turn]
) -> list[dict[str, str]]:
    """Round `round_number` ≥ 1 for `agent`, given the turns of earlier rounds."""
    shown = [t for t in earlier if t.round < round_number]
    if setup.history == LAST_ROUND:
        shown = [t for t in shown if t.round == round_number - 1 or (t.agent == agent)]
    evaluations = []
    for turn in sorted(shown, key=lambda t: (t.round, t.agent)):
        speaker = turn.agent + 1
        title = (
            f"Speaker {speaker}'s Initial Evaluation"
            if turn.round == 0
            else f"Speaker {speaker}'s Discussion - Round {turn.round}"
        )
        evaluations.append(ps.section(title, turn.text))
    body = "\n".join(
        [
            DISCUSSION_OPENING.format(speaker=agent + 1),
            "",
            *_data_sections(setup),
            *evaluations,
            ps.section(USER, DISCUSSION_INSTRUCTIONS),
        ]
    )
    return [{"role": "user", "content": body}]


AskFn = Callable[[int, int, list[dict[str, str]]], Awaitable[tuple[str, CallStats]]]


@dataclass(frozen=True)
class VerdictAnswer:
    text: str
    verdict: int | None
    reasked: bool
    extra: CallStats
    rejected: str = ""  # the first answer, kept beside the re-ask so the transcript shows both


async def ask_for_verdict(
    messages: list[dict[str, str]],
    ask: Callable[[list[dict[str, str]]], Awaitable[tuple[str, CallStats]]],
    parse: Callable[[str], int | None] = parse_verdict,
    reminder: str = FORMAT_REMINDER,
) -> VerdictAnswer:
    """One answer, asked once more with a reminder when `parse` finds no verdict in it. Debate
    agents and single judges (graded ones with their own parser and reminder) all go through here."""
    text, extra = await ask(messages)
    verdict = parse(text)
    if verdict is not None:
        return VerdictAnswer(text, verdict, False, extra)
    retry = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": reminder}]
    second, extra = await ask(retry)
    return VerdictAnswer(second, parse(second), True, extra, rejected=text)


async def run_debate(
    setup: DebateSetup,
    ask: AskFn,
    *,
    done: Sequence[Turn] = (),
    on_turn: Callable[[Turn], Awaitable[None]] | None = None,
) -> DebateOutcome:
    """Run (or resume) a debate. `ask(agent, round, messages)` returns (text, extra). To stop a
    debate midway, let `ask` raise: the turns already reported through `on_turn` are what resumes."""
    turns = {(t.round, t.agent): t for t in done}

    async def take_turn(agent: int, round_number: int, earlier: list[Turn]) -> Turn:
        messages = (
            initial_prompt(setup) if round_number == 0 else discussion_prompt(setup, agent, round_number, earlier)
        )
        answer = await ask_for_verdict(messages, lambda m: ask(agent, round_number, m))
        turn = Turn(agent, round_number, answer.text, answer.verdict, answer.reasked, answer.extra, answer.rejected)
        if on_turn is not None:
            await on_turn(turn)
        return turn

    for round_number in range(setup.rounds):
        earlier = [t for (r, _), t in turns.items() if r < round_number]
        missing = [agent for agent in range(setup.agents) if (round_number, agent) not in turns]
        # Agents in a round answer concurrently; each sees only earlier rounds. When one fails, the
        # others still finish (and are stored by on_turn), so a resume does not pay for them again.
        results = await asyncio.gather(
            *(take_turn(agent, round_number, earlier) for agent in missing), return_exceptions=True
        )
        failures = [r for r in results if isinstance(r, BaseException)]
        for turn in results:
            if isinstance(turn, Turn):
                turns[(turn.round, turn.agent)] = turn
        if failures:
            raise failures[0]
        verdicts = [turns[(round_number, agent)].verdict for agent in range(setup.agents)]
        agreed = consensus(verdicts, setup.rule)
        if agreed is not None:
            return DebateOutcome(agreed, round_number + 1, _ordered(turns))
    return DebateOutcome(None, setup.rounds, _ordered(turns))


def _ordered(turns: Mapping[tuple[int, int], Turn]) -> list[Turn]:
    return [turns[key] for key in sorted(turns)]
