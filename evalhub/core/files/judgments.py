"""Pairwise judgment files: people's labels and judges' verdicts that already exist elsewhere.

Three layouts are read (JSONL, CSV or Parquet, like benchmark files) and every row is checked before
anything is written:

- **generic**, one row per judgment: `prompt_id`, `prompt` (on a prompt's first row), `category`,
  `model_a`, `model_b`, `response_a`, `response_b` (as shown: a was in the first position), `judge`
  (a person's id or a model's name), `judge_kind` (`human` | `model`; default: judges whose id
  starts with `human` are people; one judge is one kind throughout a file), `winner` (`a` | `b` |
  `tie` | `tie (bothbad)` (Arena's tie where neither is good: a tie, kept for export) | `unreadable`:
  the judge answered but no verdict could be read; it is no battle, and the judge lab counts it
  against the judge),
  `probability_a` (the judge's probability that a is better), `grade` (a graded preference from
  a's side, −3 … 3: 3 a is significantly better, 0 of similar quality, as the privileged-information
  paper's people rate, Appendix A.1; its sign is the winner, which may then be left out),
  `criterion` (a criterion slug; default `overall`), `rationale` (why: a judge's explanation, an
  annotator's note; kept, shown beside the verdict and exported), `response_variant` (which of a model's
  responses to the prompt, as in benchmark files: a prompt one model answered twice, in two items;
  `response_variant_a` / `response_variant_b` where the two sides' differ). A judge that saw a pair both
  ways has two rows; the one earlier in the file (or in an earlier import) is the order first shown.
  A response the benchmark already holds may be named without its text: leave `response_a` (or `_b`) out,
  or null; an answer given as empty text (an empty CSV cell in a file with the column) is an empty answer,
  kept as it is;
- **mt-bench**: MT-Bench's pairwise judgment records (`question_id`, `model_a`, `model_b`,
  `winner` = `model_a` | `model_b` | `tie` | `tie (bothbad)`, `judge`, `turn`, `conversation_a`,
  `conversation_b`). Turn 1 is the first question and answer; turn 2 is the whole two-turn
  exchange (prompt id `QID-turn-2`). LMArena's battles use this layout too. The records do not say
  which side a person saw first, so model_a counts as the first position. Judges named `expert_…`,
  `author_…`, `human…` or `arena_user_…` (Arena's voters) are people;
  a judge given as a list (`["gpt-4", "pair-v2"]`) is one model judge named by its parts;
- **alpaca-eval**: AlpacaEval annotation records (`instruction`, `output_1`, `output_2`,
  `generator_1`, `generator_2`, `preference`, `annotator`, optional `dataset` as the category), as
  AlpacaEval publishes them (`annotations.json`, one JSON array) or one a line. `preference` is
  1 + the judge's probability that output_2 is better (1: output_1, 2: output_2, 1.5 or 0: a tie); a
  fractional one is kept as P(output_1 better) = 2 − preference beside the verdict, the likelier side.
  The prompt id is `ae-` and the first 12 hex digits of the instruction's SHA-1.

Where a file does not say who its judges are (every mt-bench and alpaca-eval file, and a generic file
without `judge_kind`), `judges_are` may say it for the whole file: `people` or `models` (`auto`: by the
names, as above).

Model and judge names are made slugs (`gpt-3.5-turbo` → `gpt-3-5-turbo`, `Llama 3 (8B)` → `Llama-3-8B`)
and a new model keeps the file's name as its display name, in every layout; a name with no letter or
digit, or two names that make one slug, are refused with their line.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from evalhub.core.files.benchmarks import ParsedFile
from evalhub.core.files.limits import STORED_LENGTHS, length_problems
from evalhub.core.files.responses_seen import HeldResponses, ResponsesSeen
from evalhub.core.files.rows import (
    FileError,
    RowError,
    Source,
    empty_cells_as_text,
    read_rows,
    unit_of,
    unstorable_text,
)
from evalhub.core.files.seen_keys import SeenKeys
from evalhub.core.files.slugs import is_slug, slug_for
from evalhub.core.registry import Registry

GENERIC, MT_BENCH, ALPACA_EVAL = "generic", "mt-bench", "alpaca-eval"
LAYOUTS = (GENERIC, MT_BENCH, ALPACA_EVAL)
HUMAN, MODEL = "human", "model"
UNREADABLE = "unreadable"  # the judge answered, but no verdict could be read from its answer
# LMArena's "neither is good" tie: a tie to every figure, kept apart so that an export gives it back.
BOTH_BAD = "tie (bothbad)"
WINNERS = ("a", "b", "tie", BOTH_BAD, UNREADABLE)
DEFAULT_CRITERION = "overall"
GENERIC_COLUMNS = (
    "prompt_id",
    "prompt",
    "category",
    "model_a",
    "model_b",
    "response_a",
    "response_b",
    "judge",
    "judge_kind",
    "winner",
    "probability_a",
    "grade",
    "criterion",
    "blind_winner",  # a person's verdict before an aid (a blind-first study), a / b / tie
    "aid",  # what they saw before `winner`: debate, critique or none
    "rationale",  # why the judge or person gave the verdict (a judge's explanation, an annotator's note)
    "response_variant",  # which of a model's responses to the prompt both sides are (as in benchmark files)
    "response_variant_a",  # the first side's, where the two differ
    "response_variant_b",
)
RESPONSE_COLUMNS = ("response_a", "response_b")
BLIND_WINNERS = ("a", "b", "tie")
# The aids of a blind-first study, as evalhub.core.scaleeval.aids names them (a test holds the two equal:
# importing that module here would close a cycle, scaleeval → judge_lab → statistics → files).
AIDS = ("debate", "critique", "none")
MT_BENCH_COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "turn", "conversation_a", "conversation_b")
ALPACA_COLUMNS = ("instruction", "output_1", "output_2", "generator_1", "generator_2", "preference", "annotator")
MAX_JUDGE_LENGTH = 100  # a judge becomes a LanguageModel slug
NAMES_KEY = "_names"  # a converted row's {slug: name as the file wrote it}
_SLUG_SOURCE = re.compile("[a-zA-Z0-9]")
# MT-Bench's human judgments name experts and authors; LMArena's battles (the same layout) name each
# voter `arena_user_…`: all people. Other judge names (gpt4_pair, …) are models.
MT_BENCH_PEOPLE = ("expert", "author", "human", "arena_user")
# Who a file's judges are, where the file does not say (a generic file's `judge_kind` column does).
AUTO, PEOPLE, MODELS = "auto", "people", "models"
JUDGES_ARE = (AUTO, PEOPLE, MODELS)


class JudgmentRecord(msgspec.Struct, frozen=True, array_like=True):
    """One judgment as read. A msgspec Struct: made and spooled (as an array) several times faster than
    a dataclass, which counts at ten million rows."""

    line: int
    prompt_id: str
    model_a: str
    model_b: str
    judge: str
    judge_is_human: bool
    winner: str  # "a" (the first position), "b", "tie", "tie (bothbad)" or "unreadable"
    probability_a: float | None
    criterion: str
    grade: float | None = None  # −3 … 3 from a's side; its sign is `winner`
    blind_winner: str | None = None  # a person's verdict before they saw `aid` ("a", "b", "tie"); `winner` after
    aid: str = ""
    rationale: str = ""  # why, as the file says it
    variant_a: str = ""  # which of model_a's responses to the prompt ("" for its one response)
    variant_b: str = ""


@dataclass
class ParsedJudgments:
    """What reading a judgment file found. The judgments themselves go to `on_judgment` as they are read
    (none is kept here: a file of ten million would not fit in memory)."""

    layout: str
    benchmark: ParsedFile  # the prompts and responses, checked as a benchmark file's are
    errors: list[RowError] = field(default_factory=list)
    rows: int = 0
    names: dict[str, str] = field(default_factory=dict)  # slug → the name the file gave it, where they differ
    judges: dict[str, bool] = field(default_factory=dict)  # judge slug → is a person

    @property
    def ok(self) -> bool:
        return not self.errors

    def close(self) -> None:
        """Its prompts and responses on disk go now, not when the object is collected."""
        self.benchmark.close()


def detect_layout(columns: Collection[str]) -> str:
    if {"question_id", "conversation_a"} <= set(columns):
        return MT_BENCH
    if {"instruction", "output_1", "output_2"} <= set(columns):
        return ALPACA_EVAL
    return GENERIC


def parse_judgment_file(
    data: Source,
    fmt: str,
    *,
    layout: str = "auto",
    known_models: Collection[str],
    allow_new_models: bool = False,
    judges_are: str = AUTO,
    on_judgment: Callable[[JudgmentRecord], object] | None = None,
    held: HeldResponses | None = None,
) -> ParsedJudgments:
    """Read and check a whole judgment file; nothing here writes. `errors` names every bad row.
    `judges_are` (people | models) classifies the judges where the file does not; `held` says which
    responses named without their text the benchmark holds (none, without it).

    `on_judgment` is given each judgment as soon as its row passes its own checks, while the rest of
    the file is still being read (a caller may store it at once, and must undo that if `errors` is
    not empty at the end: a later row, or the file's prompts and responses, may still be refused)."""
    return parse_judgment_rows(
        judgment_rows(data, fmt),
        unit_of(fmt),
        layout=layout,
        known_models=known_models,
        allow_new_models=allow_new_models,
        judges_are=judges_are,
        on_judgment=on_judgment,
        held=held,
    )


def parse_judgment_rows(
    rows: Iterable[tuple[int, dict[str, Any] | str]],
    unit: str,
    *,
    layout: str = "auto",
    known_models: Collection[str],
    allow_new_models: bool = False,
    judges_are: str = AUTO,
    on_judgment: Callable[[JudgmentRecord], object] | None = None,
    held: HeldResponses | None = None,
) -> ParsedJudgments:
    """`parse_judgment_file` for rows read already: (number, row, or why it cannot be read) each, numbered
    in `unit`s (a study's rows, made from its files: evalhub.core.files.study)."""
    if layout not in ("auto", *LAYOUTS):
        raise ValueError(f"unknown layout {layout!r}; use auto, {', '.join(LAYOUTS)}.")
    if judges_are not in JUDGES_ARE:
        raise ValueError(f"unknown judges_are {judges_are!r}; use {', '.join(JUDGES_ARE)}.")
    parsed = ParsedJudgments(layout=layout, benchmark=ParsedFile())
    rows = iter(rows)
    try:
        ahead = []  # the rows up to the first readable one, whose columns say the layout
        for item in rows:
            ahead.append(item)
            if isinstance(item[1], dict):
                break
        layout = parsed.layout = _layout_of(ahead, layout)
        convert = _converter(layout, judges_are)

        def generic() -> Iterator[tuple[int, dict[str, Any] | str]]:
            for line, row in itertools.chain(ahead, rows):
                parsed.rows += 1
                yield line, row if isinstance(row, str) else convert(row)

        _check_generic(parsed, generic(), unit, set(known_models), allow_new_models, on_judgment, held)
    except FileError as error:
        parsed.errors = [RowError(error.line, str(error), unit)]
        return parsed
    if parsed.rows == 0:
        parsed.errors.append(RowError(None, "the file has no rows."))
    return parsed


def judgment_rows(data: Source, fmt: str) -> Iterable[tuple[int, dict[str, Any] | str]]:
    """A judgment file's rows as read, one at a time (only what a judgment keeps stays in memory); a CSV's
    empty response cell is an empty answer."""
    rows = read_rows(data, fmt, check_header=no_duplicate_columns, nested=())
    return empty_cells_as_text(rows, fmt, RESPONSE_COLUMNS)


def _layout_of(ahead: Iterable[tuple[int, dict[str, Any] | str]], layout: str) -> str:
    """The layout asked for, or (auto) the one the first readable row's columns say."""
    if layout != "auto":
        return layout
    return detect_layout(next((row for _, row in ahead if isinstance(row, dict)), {}))


def _converter(layout: str, judges_are: str) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """A layout's rows as generic rows, with judges the file does not classify said to be `judges_are`."""
    convert = CONVERTERS[layout]
    if judges_are == AUTO:
        return convert
    return _judges_said(convert, HUMAN if judges_are == PEOPLE else MODEL, says=layout == GENERIC)


def _judges_said(
    convert: Callable[[dict[str, Any]], dict[str, Any] | str], kind: str, *, says: bool
) -> Callable[[dict[str, Any]], dict[str, Any] | str]:
    """`convert`, with every judge of `kind`; where the layout `says` (a generic file's own
    `judge_kind` column), a row that gives one keeps it."""

    def converted(row: dict[str, Any]) -> dict[str, Any] | str:
        given = row.get("judge_kind") if says else None
        out = convert(row)
        if isinstance(out, dict) and not given:
            out = {**out, "judge_kind": kind}
        return out

    return converted


def no_duplicate_columns(columns: list[str]) -> None:
    duplicates = sorted({name for name in columns if columns.count(name) > 1})
    if duplicates:
        raise FileError(f"duplicate column(s): {', '.join(duplicates)}.", 1)


# --- the three layouts, each turned into generic rows ----------------------------------------


_GENERIC_SET = frozenset(GENERIC_COLUMNS)


NAMED_COLUMNS = ("model_a", "model_b", "judge")  # names a file may give as it likes; made slugs


def _generic(row: dict[str, Any]) -> dict[str, Any] | str:
    if not row.keys() <= _GENERIC_SET:  # the common case first, without building a set per row
        unknown = sorted(set(row) - _GENERIC_SET)
        return f"unknown column(s) {', '.join(map(repr, unknown))}; a generic file has {', '.join(GENERIC_COLUMNS)}."
    a, b, judge = row.get("model_a"), row.get("model_b"), row.get("judge")
    # Slugs already, the common case: a million rows pass here (0.23 µs a row; with a generator, 0.77).
    if type(a) is str and type(b) is str and type(judge) is str and _is_slug(a) and _is_slug(b) and _is_slug(judge):
        return row
    given = [(column, row.get(column)) for column in NAMED_COLUMNS]
    # A study's own names (`GPT-4o`, `Llama 3 (8B)`), made slugs with the names kept as display names, as
    # the mt-bench and alpaca-eval layouts do; a missing one is left for the row's check to name.
    named = _named({column: (column, name) for column, name in given if name not in (None, "")})
    return named if isinstance(named, str) else {**row, **named}


def _mt_bench(row: dict[str, Any]) -> dict[str, Any] | str:
    missing = [name for name in ("question_id", "model_a", "model_b", "winner", "judge") if row.get(name) is None]
    if missing:
        return f"missing MT-Bench field(s) {', '.join(missing)}."
    turn = row.get("turn", 1)
    if isinstance(turn, bool) or turn not in (1, 2):
        return f"'turn' must be 1 or 2, not {turn!r}."
    question_id = row["question_id"]
    if isinstance(question_id, bool) or not isinstance(question_id, (int, str)):
        return "'question_id' must be text or an integer."
    exchanges = []
    for side in ("conversation_a", "conversation_b"):
        exchange = _exchange(row.get(side), turn)
        if isinstance(exchange, str):
            return f"{side!r} {exchange}"
        exchanges.append(exchange)
    (questions_a, answer_a), (questions_b, answer_b) = exchanges
    if questions_a != questions_b:
        return "'conversation_a' and 'conversation_b' ask different questions."
    winner = {"model_a": "a", "model_b": "b", "tie": "tie", BOTH_BAD: BOTH_BAD}.get(row["winner"])
    if winner is None:
        return f"'winner' must be model_a, model_b, tie or 'tie (bothbad)', not {row['winner']!r}."
    judge = row["judge"]
    if isinstance(judge, (list, tuple)):
        if not judge or not all(isinstance(part, str) for part in judge):
            return "'judge' must be text or a list of text."
        judge = "-".join(judge)
    if not isinstance(judge, str):
        return "'judge' must be text or a list of text."
    names = _named(
        {"model_a": ("model_a", row["model_a"]), "model_b": ("model_b", row["model_b"]), "judge": ("judge", judge)}
    )
    if isinstance(names, str):
        return names
    criterion = row.get("criterion")  # evalhub's own battles export says which criterion; Arena's do not
    if criterion is not None and not isinstance(criterion, str):
        return "'criterion' must be text (a criterion's slug)."
    return {
        "prompt_id": str(question_id) if turn == 1 else f"{question_id}-turn-{turn}",
        "prompt": questions_a,
        **names,
        "response_a": answer_a,
        "response_b": answer_b,
        "judge_kind": HUMAN if judge.lower().startswith(MT_BENCH_PEOPLE) else MODEL,
        "winner": winner,
        **({"criterion": criterion} if criterion else {}),
    }


def _named(fields: dict[str, tuple[str, Any]]) -> dict[str, Any] | str:
    """{generic column: (the file's column, name)} → each name made a slug, with the names as given under
    NAMES_KEY; a name that gives no slug is refused (two such names would otherwise become one model,
    `unnamed`), named by the file's own column."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for column, (source, name) in fields.items():
        if not isinstance(name, str):
            return f"{source!r} must be text."
        if not _SLUG_SOURCE.search(name):
            return f"{source!r} {name!r} has no letter or digit to name a model by."
        slug = slug_for(name)
        out[column] = slug
        given[slug] = name.strip()
    out[NAMES_KEY] = given
    return out


def _exchange(conversation: Any, turn: int) -> tuple[str, str] | str:
    """The questions and the answers of the first `turn` turns, as one prompt and one response."""
    if not isinstance(conversation, (list, tuple)) or not all(isinstance(m, Mapping) for m in conversation):
        return "must be a list of messages with 'role' and 'content'."
    if conversation and conversation[0].get("role") != "user":
        # An exchange that opens with the assistant would pair each answer with the wrong question.
        return f"must start with the user's message, not {conversation[0].get('role')!r}."
    users = [m.get("content") for m in conversation if m.get("role") == "user"]
    answers = [m.get("content") for m in conversation if m.get("role") == "assistant"]
    if len(users) < turn or len(answers) < turn:
        return f"has fewer than {turn} question(s) and answer(s)."
    if not all(isinstance(text, str) for text in (*users[:turn], *answers[:turn])):
        return "has a message whose content is not text."
    if turn == 1:
        return users[0], answers[0]
    label = "Turn {}: {}".format
    questions = "\n\n".join(label(i + 1, text) for i, text in enumerate(users[:turn]))
    return questions, "\n\n".join(label(i + 1, text) for i, text in enumerate(answers[:turn]))


def _alpaca_eval(row: dict[str, Any]) -> dict[str, Any] | str:
    missing = [name for name in ALPACA_COLUMNS[:-1] if row.get(name) is None]
    if missing:
        return f"missing AlpacaEval field(s) {', '.join(missing)}."
    for name in ("instruction", "generator_1", "generator_2"):
        if not isinstance(row[name], str):
            return f"{name!r} must be text."
    preference = row["preference"]
    if isinstance(preference, bool) or not isinstance(preference, (int, float)) or not math.isfinite(preference):
        return f"'preference' must be a number (1, 2, 1.5 for a tie, or in between), not {preference!r}."
    if preference == 0:  # AlpacaEval's older code for a tie
        preference = 1.5
    if not 1 <= preference <= 2:
        return f"'preference' must be between 1 and 2 (or 0 for a tie), not {preference!r}."
    # A fractional preference is the judge's probability, which AlpacaEval's win rate averages; 1, 2 and
    # 1.5 are plain verdicts (an unweighted annotator), which count 1, 0 and ½ in it all the same.
    probability = None if preference in (1, 1.5, 2) else 2 - float(preference)
    winner = "tie" if preference == 1.5 else "a" if preference < 1.5 else "b"
    annotator = row.get("annotator") or "alpaca-eval-annotator"
    names = _named(
        {
            "model_a": ("generator_1", row["generator_1"]),
            "model_b": ("generator_2", row["generator_2"]),
            "judge": ("annotator", annotator),
        }
    )
    if isinstance(names, str):
        return names
    digest = hashlib.sha1(row["instruction"].encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()
    return {
        "prompt_id": f"ae-{digest[:12]}",
        "prompt": row["instruction"],
        **({"category": row["dataset"]} if "dataset" in row else {}),
        **names,
        "response_a": row["output_1"],
        "response_b": row["output_2"],
        "judge_kind": HUMAN if annotator.lower().startswith("human") else MODEL,
        "winner": winner,
        "probability_a": probability,
    }


# A converter reads one row of its layout and gives a generic row, or why the row cannot be read.
CONVERTERS: Registry[Callable[[dict[str, Any]], dict[str, Any] | str]] = Registry(
    "judgment import format",
    docs="extending/import-formats.md",
    what="layout",
    unknown=ValueError,
    check=lambda name, convert: "" if callable(convert) else "a converter is a function of one row",
    entries={GENERIC: _generic, MT_BENCH: _mt_bench, ALPACA_EVAL: _alpaca_eval},
)


# --- the generic rows, checked -----------------------------------------------------------------


def _check_generic(
    parsed: ParsedJudgments,
    rows: Iterable[tuple[int, dict[str, Any] | str]],
    unit: str,
    known_models: set[str],
    allow_new_models: bool,
    on_judgment: Callable[[JudgmentRecord], object] | None = None,
    held: HeldResponses | None = None,
) -> None:
    """Each judgment row checked on its own; its prompt and two responses then go through the
    benchmark file's checks (one row per response, the first time each is seen; one named without its
    text must be one the file gives elsewhere or the benchmark holds)."""
    responses = ResponsesSeen(unit, known_models=known_models, allow_new_models=allow_new_models, held=held)
    keys = SeenKeys()
    named: dict[str, tuple[int, str]] = {}  # slug → (first line, the name it was made from)
    kinds: dict[str, tuple[int, bool]] = {}  # judge → (first line, is a person)
    for line, row in rows:
        if isinstance(row, str):
            parsed.errors.append(RowError(line, row, unit))
            continue
        given = row.pop(NAMES_KEY, None)  # only converted layouts carry names as the file wrote them
        clash = _clashing_names(given, named, line, unit) if given else ""
        if clash:
            parsed.errors.append(RowError(line, clash, unit))
            continue
        record_or_problems = _judgment(line, row)
        if isinstance(record_or_problems, list):
            parsed.errors.extend(RowError(line, problem, unit) for problem in record_or_problems)
            continue
        record = record_or_problems
        # A repeat is found once every row is in (and refused then: `on_judgment` may have had it).
        keys.add((record.prompt_id, record.model_a, record.model_b, record.judge, record.criterion), line)
        # One judge is a person or a model throughout: its labels count on one side of the boards.
        first_kind = kinds.setdefault(record.judge, (line, record.judge_is_human))
        if first_kind[1] != record.judge_is_human:
            what = "a person" if first_kind[1] else "a model"
            parsed.errors.append(
                RowError(line, f"judge {record.judge!r} is {what} on {unit} {first_kind[0]}, not here.", unit)
            )
            continue
        for column, model, variant in (
            ("response_a", record.model_a, record.variant_a),
            ("response_b", record.model_b, record.variant_b),
        ):
            text = row.get(column)
            if text is None:
                responses.refer(line, row, record.prompt_id, model, named=column, variant=variant)
            else:
                responses.add(line, row, record.prompt_id, model, text, named=column, variant=variant)
        if on_judgment is not None:  # a response that differs is named once the file is read, as a repeat is
            on_judgment(record)
    parsed.errors.extend(
        RowError(line, f"the same judge, pair and criterion as on {unit} {first}.", unit)
        for line, first in keys.repeats()
    )
    parsed.names = {slug: name for slug, (_, name) in named.items() if name != slug}
    parsed.judges = {judge: is_person for judge, (_, is_person) in kinds.items()}
    checked = responses.finish()
    parsed.benchmark.close()  # the empty one it was made with
    parsed.benchmark = checked
    parsed.errors.extend(checked.errors)
    parsed.errors.extend(responses.errors)
    parsed.errors.sort(key=lambda error: error.line or 0)


def _clashing_names(given: dict[str, str], named: dict[str, tuple[int, str]], line: int, unit: str) -> str:
    """Why two different names in the file would become one model (or judge), if they would."""
    for slug, name in given.items():
        first = named.setdefault(slug, (line, name))
        if first[1] != name:
            return f"{name!r} and {first[1]!r} (on {unit} {first[0]}) would both become {slug!r}; rename one."
    return ""


def required_texts(
    row: dict[str, Any], names: tuple[str, ...], verbatim: tuple[str, ...]
) -> tuple[dict[str, str], list[str]]:
    """The row's required text fields (an integer prompt_id read as text), stripped except those in
    `verbatim` (responses keep their whitespace), and what is wrong with any of them."""
    problems, texts = [], {}
    for name in names:
        value = row.get(name)
        # The common case first (a million rows pass here): ASCII text holds no lone surrogate.
        if type(value) is str and value.isascii() and "\x00" not in value and (stripped := value.strip()):
            texts[name] = value if name in verbatim else stripped
            continue
        if isinstance(value, int) and not isinstance(value, bool) and name == "prompt_id":
            value = str(value)
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(f"missing required field {name!r}.")
        elif not isinstance(value, str):
            problems.append(f"{name!r} must be text.")
        elif problem := unstorable_text(value):
            problems.append(f"{name!r} {problem}")
        else:
            texts[name] = value if name in verbatim else value.strip()
    return texts, problems


def _judgment(line: int, row: dict[str, Any]) -> JudgmentRecord | list[str]:
    given_grade = row.get("grade")
    grade, problems = (None, []) if given_grade is None else _grade(given_grade)
    if grade is not None and row.get("winner") in (None, ""):
        row = {**row, "winner": _winner_of(grade)}
    texts, missing = required_texts(row, ("prompt_id", "model_a", "model_b", "judge", "winner"), verbatim=())
    if problems:  # a grade was given but is unreadable: that, not a missing winner, is the problem
        missing = [problem for problem in missing if "'winner'" not in problem]
    problems += missing
    if problems:
        return problems
    problems += length_problems({**row, **texts})
    problems += _answer_problems(row)
    variant_a, variant_b = _variants(row, problems)
    winner = texts["winner"].lower()
    if winner not in WINNERS:
        problems.append(f"'winner' must be a, b, tie, 'tie (bothbad)' or unreadable, not {texts['winner']!r}.")
    if texts["model_a"] == texts["model_b"]:
        problems.append("model_a and model_b are the same model: a pair compares two.")
    judge = texts["judge"]
    if not _is_slug(judge) or len(judge) > MAX_JUDGE_LENGTH:
        problems.append(f"judge {judge!r} must be a slug of at most {MAX_JUDGE_LENGTH} characters.")
    kind = row.get("judge_kind") or (HUMAN if judge.startswith("human") else MODEL)
    if kind not in (HUMAN, MODEL):
        problems.append(f"'judge_kind' must be human or model, not {kind!r}.")
    probability = row.get("probability_a")
    if isinstance(probability, str):
        try:
            probability = float(probability)
        except ValueError:
            problems.append(f"'probability_a' must be a number between 0 and 1, not {probability!r}.")
            probability = None
    if probability is not None and (
        isinstance(probability, bool)
        or not isinstance(probability, (int, float))
        or not 0 <= probability <= 1  # NaN fails this too
    ):
        problems.append(f"'probability_a' must be a number between 0 and 1, not {probability!r}.")
    if winner == UNREADABLE and probability is not None:
        problems.append("an unreadable answer has no 'probability_a'.")
    if grade is not None and winner in WINNERS and winner.split(" ")[0] != _winner_of(grade):
        problems.append(f"'grade' {grade:g} and 'winner' {winner!r} disagree: a grade's sign is its winner.")
    criterion = row.get("criterion") or DEFAULT_CRITERION
    if not isinstance(criterion, str) or not _is_slug(criterion):
        problems.append(f"'criterion' must be a criterion slug, not {criterion!r}.")
    blind, aid = _blind(row, kind, problems)
    rationale = row.get("rationale") or ""
    if not isinstance(rationale, str):
        problems.append("'rationale' must be text.")
    elif problem := unstorable_text(rationale):
        problems.append(f"'rationale' {problem}")
    if problems:
        return problems
    # A million labels name a few hundred models and judges: one copy of each name.
    return JudgmentRecord(
        line=line,
        prompt_id=texts["prompt_id"],  # not interned: an Arena file names a new one a row, kept for good
        model_a=sys.intern(texts["model_a"]),
        model_b=sys.intern(texts["model_b"]),
        judge=sys.intern(judge),
        judge_is_human=kind == HUMAN,
        winner=sys.intern(winner),
        probability_a=None if probability is None else float(probability),
        criterion=sys.intern(criterion),
        grade=grade,
        blind_winner=blind,
        aid=aid,
        rationale=rationale.strip(),
        variant_a=variant_a,
        variant_b=variant_b,
    )


def _answer_problems(row: dict[str, Any]) -> list[str]:
    """The responses as given: text (empty too, an empty answer), or left out (by reference)."""
    problems = []
    for column in RESPONSE_COLUMNS:
        text = row.get(column)
        if text is None or (type(text) is str and text.isascii() and "\x00" not in text):
            continue
        if not isinstance(text, str):
            problems.append(f"{column!r} must be text.")
        elif problem := unstorable_text(text):
            problems.append(f"{column!r} {problem}")
    return problems


def _variants(row: dict[str, Any], problems: list[str]) -> tuple[str, str]:
    """Which of its model's responses each side is: `response_variant_a` / `_b`, else `response_variant`."""
    both = row.get("response_variant")
    if both is None and row.get("response_variant_a") is None and row.get("response_variant_b") is None:
        return "", ""  # nearly every row: a model's one response to the prompt
    variants = []
    for column in ("response_variant_a", "response_variant_b"):
        value = row.get(column)
        own = value not in (None, "")  # else `response_variant`'s, whose length length_problems names
        value = value if own else both
        if value in (None, ""):
            variants.append("")
            continue
        if not isinstance(value, str):
            problems.append(f"{column!r} must be text.")
            variants.append("")
            continue
        value = value.strip()
        if own and len(value) > (limit := STORED_LENGTHS["response_variant"]):
            problems.append(f"{column!r} is longer than {limit} characters ({len(value)}).")
        elif problem := unstorable_text(value):
            problems.append(f"{column!r} {problem}")
        variants.append(sys.intern(value))
    return variants[0], variants[1]


def _blind(row: dict[str, Any], kind: str, problems: list[str]) -> tuple[str | None, str]:
    """A blind-first study's columns: the person's verdict before the aid, and the aid (both optional)."""
    blind, aid = row.get("blind_winner"), row.get("aid")
    blind = str(blind).strip().lower() if blind not in (None, "") else None
    aid = str(aid).strip().lower() if aid not in (None, "") else ""
    if blind is None:
        if aid:
            problems.append("'aid' says what a person saw after a blind verdict: give 'blind_winner' too.")
        return None, ""
    if blind not in BLIND_WINNERS:
        problems.append(f"'blind_winner' must be a, b or tie, not {row['blind_winner']!r}.")
    if kind != HUMAN:
        problems.append("'blind_winner' is a person's verdict before an aid: this judge is a model.")
    if aid and aid not in AIDS:
        problems.append(f"'aid' must be one of {', '.join(AIDS)}, not {row['aid']!r}.")
    return sys.intern(blind), sys.intern(aid)


# A file names a few hundred judges and criteria over a million rows: each is checked once.
_is_slug = functools.lru_cache(maxsize=65536)(is_slug)
GRADE_LOW, GRADE_HIGH = -3, 3


def _winner_of(grade: float) -> str:
    """The winner a grade's sign names: a (first) above 0, b below, a tie at 0."""
    return "a" if grade > 0 else "b" if grade < 0 else "tie"


def _grade(value: Any) -> tuple[float | None, list[str]]:
    """An optional graded preference, −3 … 3 (a number, or text holding one)."""
    if value is None or value == "":
        return None, []
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not GRADE_LOW <= value <= GRADE_HIGH:
        return None, [f"'grade' must be a number from {GRADE_LOW} to {GRADE_HIGH}, not {value!r}."]
    return float(value), []


@dataclass(frozen=True)
class PreviewRow:
    """One of a file's first rows as the import would read it: the judgment, or why it cannot be one."""

    line: int
    place: str  # where the row came from, where a line number does not say it (a study's file and judge)
    values: dict[str, Any]  # the generic columns as read (names made slugs, verdicts mapped)
    problems: tuple[str, ...]
    record: JudgmentRecord | None = None  # the judgment, where the row passes its own checks
    held: frozenset[str] = frozenset()  # the response columns left out whose responses the benchmark holds


def preview_rows(
    rows: Iterable[tuple[int, dict[str, Any] | str]], *, layout: str = "auto", judges_are: str = AUTO, limit: int = 10
) -> tuple[str, list[PreviewRow]]:
    """The layout read and the first `limit` rows, each converted and checked on its own as the import
    would (nothing is written; what only the whole file can tell, a repeat or a changed response, is
    not checked)."""
    ahead = list(itertools.islice(rows, limit))
    layout = _layout_of(ahead, layout)
    convert = _converter(layout, judges_are)
    shown = []
    for line, row in ahead:
        if isinstance(row, str):
            shown.append(PreviewRow(line, "", {}, (row,)))
            continue
        converted = convert(row)
        if isinstance(converted, str):
            shown.append(PreviewRow(line, "", {}, (converted,)))
            continue
        names = converted.pop(NAMES_KEY, {})
        checked = _judgment(line, converted)
        values = {**converted, "names": names}
        if isinstance(checked, list):
            shown.append(PreviewRow(line, "", values, tuple(checked)))
        else:
            shown.append(PreviewRow(line, "", values, (), checked))
    return layout, shown
