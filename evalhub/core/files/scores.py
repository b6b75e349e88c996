"""Score files: people's (or judges') scores of single responses, several raters per response.

The pointwise counterpart of judgment files, for the meta-evaluation of pointwise judges (G-Eval's
correlation with people on SummEval, GEM's Table 1 against instructor grades). One row per score
(JSONL, CSV or Parquet, every row checked before anything is written):

`prompt_id`, `prompt` (on a prompt's first row), `category`, `model` (who wrote the response),
`response`, `rater` (a person's id or a judge's name, a slug), `rater_kind` (`human` | `model`;
default: raters whose id starts with `human` are people, as in judgment files), `criterion` (a
criterion or metric slug; default `overall`), `score` (a number), `scale` (optional, e.g. `1-5`: a
score outside it is refused; a new criterion takes its levels from a 1-to-n scale), `rationale`
(optional), `response_variant` (optional: which of a model's responses to the prompt, e.g. one hint
tier's, as in benchmark files). A response the benchmark holds may be named without its text (`response`
left out, or null); an empty one (an empty CSV cell in a file with the column) is an empty answer.

Inspect AI eval logs become such rows too (evalhub.catalog.inspect_logs): each sample's output is
the response and each scorer a rater.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from sys import intern
from typing import Any

import msgspec

from evalhub.core.files.benchmarks import ParsedFile
from evalhub.core.files.judgments import (
    DEFAULT_CRITERION,
    HUMAN,
    MAX_JUDGE_LENGTH,
    MODEL,
    no_duplicate_columns,
    required_texts,
)
from evalhub.core.files.limits import length_problems
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
from evalhub.core.files.slugs import is_slug
from evalhub.core.files.spool import Spool

SCORE_COLUMNS = (
    "prompt_id",
    "prompt",
    "category",
    "model",
    "response",
    "rater",
    "rater_kind",
    "criterion",
    "score",
    "scale",
    "rationale",
    "response_variant",
)
_SCORE_COLUMN_SET = frozenset(SCORE_COLUMNS)
_SCALE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*[-–]\s*(-?\d+(?:\.\d+)?)\s*$")


class ScoreRecord(msgspec.Struct, frozen=True, array_like=True):
    """One score as read: a msgspec Struct, spooled to disk as an array (ten million do not stay in memory)."""

    line: int
    prompt_id: str
    model: str
    rater: str
    rater_is_human: bool
    criterion: str
    score: float
    rationale: str = ""
    variant: str = ""  # the response's variant ("" for a model's one response to the prompt)


@dataclass
class ParsedScores:
    """What reading a score file found. Its scores wait on disk (`scores`, read back in the file's order),
    so memory grows with the file's responses, not its rows."""

    benchmark: ParsedFile  # the prompts and responses, checked as a benchmark file's are
    scores: Spool[ScoreRecord] = field(default_factory=lambda: Spool(ScoreRecord))
    errors: list[RowError] = field(default_factory=list)
    rows: int = 0
    unit: str = "line"  # what a row is called in messages: a line, a row of Parquet, a sample of a log
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)  # criterion → the (low, high) it gave
    left_out: int = 0  # an Inspect log's samples with no output or no score
    raters: dict[str, bool] = field(default_factory=dict)  # rater slug → is a person (as its first score says)
    criteria: set[str] = field(default_factory=set)  # the criteria the scores name

    @property
    def ok(self) -> bool:
        return not self.errors

    def close(self) -> None:
        """Its prompts, responses and scores on disk go now, not when the object is collected."""
        self.benchmark.close()
        self.scores.close()


def parse_score_file(
    data: Source,
    fmt: str,
    *,
    known_models: Collection[str],
    allow_new_models: bool = False,
    refuse: Callable[[ScoreRecord], str] | None = None,
    held: HeldResponses | None = None,
) -> ParsedScores:
    """Read and check a whole score file, given as bytes or a stream; nothing here writes. `errors` names
    every bad row; `refuse` may say why a score that passed its row's checks cannot be imported; `held`
    which responses named without their text the benchmark holds."""
    unit = unit_of(fmt)
    rows = score_rows(data, fmt)
    try:
        return parse_score_rows(
            rows, unit, known_models=known_models, allow_new_models=allow_new_models, refuse=refuse, held=held
        )
    except FileError as error:  # the file cannot be read on (an unclosed quote, say): that alone is said
        return ParsedScores(ParsedFile(), errors=[RowError(error.line, str(error), unit)])


def score_rows(data: Source, fmt: str) -> Iterable[tuple[int, dict[str, Any] | str]]:
    """A score file's rows as read, a row at a time in memory; a CSV's empty `response` is an empty answer."""
    return empty_cells_as_text(read_rows(data, fmt, check_header=_check_header, nested=()), fmt, ("response",))


@dataclass(frozen=True)
class ScorePreviewRow:
    """One of a score file's first rows as the import would read it: the score, or why it cannot be one."""

    line: int
    values: dict[str, Any]  # the row as read
    problems: tuple[str, ...]
    record: ScoreRecord | None = None  # the score, where the row passes its own checks
    place: str = ""  # where the row came from, where a number does not say it (an Inspect log's file and sample)
    held: bool = False  # its response is left out, and the benchmark holds it


def preview_score_rows(rows: Iterable[tuple[int, dict[str, Any] | str]], limit: int = 10) -> list[ScorePreviewRow]:
    """The first `limit` rows, each checked on its own as the import checks it (nothing is written; what only
    the whole file can tell, a repeat or a response whose text changes, is not checked)."""
    shown = []
    for line, row in itertools.islice(rows, limit):
        if isinstance(row, str):
            shown.append(ScorePreviewRow(line, {}, (row,)))
            continue
        record = _score(line, row)
        if isinstance(record, list):
            shown.append(ScorePreviewRow(line, row, tuple(record)))
        else:
            shown.append(ScorePreviewRow(line, row, (), record))
    return shown


def parse_score_rows(
    rows: Iterable[tuple[int, dict[str, Any] | str]],
    unit: str,
    *,
    known_models: Collection[str],
    allow_new_models: bool = False,
    refuse: Callable[[ScoreRecord], str] | None = None,
    held: HeldResponses | None = None,
) -> ParsedScores:
    """Each score row checked on its own; its prompt and response then go through the benchmark file's
    checks (one row per response, the first time each is seen; one named without its text must be one
    the benchmark holds or the file gives elsewhere)."""
    parsed = ParsedScores(ParsedFile(), unit=unit)
    responses = ResponsesSeen(unit, known_models=known_models, allow_new_models=allow_new_models, held=held)
    keys = SeenKeys()  # a repeat is refused once every row is in
    for line, row in rows:
        parsed.rows += 1
        if isinstance(row, str):
            parsed.errors.append(RowError(line, row, unit))
            continue
        record = _score(line, row)
        if isinstance(record, list):
            parsed.errors.extend(RowError(line, problem, unit) for problem in record)
            continue
        keys.add((record.prompt_id, record.model, record.variant, record.rater, record.criterion), line)
        if refuse is not None and (problem := refuse(record)):
            parsed.errors.append(RowError(line, problem, unit))
            continue
        if scale := scale_of(row):
            parsed.scales.setdefault(record.criterion, scale)
        # A response that differs, or one named that the benchmark lacks, is named once the file is read.
        if (text := row.get("response")) is None:
            responses.refer(line, row, record.prompt_id, record.model, named="the response", variant=record.variant)
        else:
            responses.add(line, row, record.prompt_id, record.model, text, named="the response", variant=record.variant)
        parsed.criteria.add(record.criterion)
        parsed.raters.setdefault(record.rater, record.rater_is_human)
        parsed.scores.add(record)
    parsed.errors.extend(
        RowError(line, f"the same rater, response and criterion as on {unit} {first}.", unit)
        for line, first in keys.repeats()
    )
    if parsed.rows == 0:
        parsed.errors.append(RowError(None, "the file has no rows."))
    parsed.benchmark.close()  # the empty one it was made with
    parsed.benchmark = responses.finish()
    parsed.errors.extend(parsed.benchmark.errors)
    parsed.errors.extend(responses.errors)
    parsed.errors.sort(key=lambda error: error.line or 0)
    return parsed


def scale_of(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """A checked row's `scale` as (low, high), or None where it gives none."""
    bounds = _SCALE.match(str(row.get("scale") or ""))
    return (float(bounds[1]), float(bounds[2])) if bounds else None


def _check_header(columns: list[str]) -> None:
    """A CSV's or Parquet file's columns, refused once at line 1 (a JSONL file's keys, row by row)."""
    no_duplicate_columns(columns)
    if problem := _unknown_columns(columns):
        raise FileError(problem, 1)


def _unknown_columns(columns: Iterable[str]) -> str:
    unknown = sorted(set(columns) - _SCORE_COLUMN_SET)  # asked of every JSONL row: the set is built once
    return f"unknown column(s) {', '.join(unknown)}; a score file has {', '.join(SCORE_COLUMNS)}." if unknown else ""


def _score(line: int, row: dict[str, Any]) -> ScoreRecord | list[str]:
    if problem := _unknown_columns(row):
        return [problem]
    texts, problems = required_texts(row, ("prompt_id", "model", "rater"), verbatim=())
    response = row.get("response")
    if response is not None and not isinstance(response, str):
        problems.append("'response' must be text.")
    elif response and (unstorable := unstorable_text(response)):
        problems.append(f"'response' {unstorable}")
    score = _number(row.get("score"))
    if score is None:
        problems.append(f"'score' must be a number, not {row.get('score')!r}.")
    if problems:
        return problems
    problems += length_problems({**row, **texts})
    rater = texts["rater"]
    if not is_slug(rater) or len(rater) > MAX_JUDGE_LENGTH:
        problems.append(f"rater {rater!r} must be a slug of at most {MAX_JUDGE_LENGTH} characters.")
    kind = row.get("rater_kind") or (HUMAN if rater.startswith("human") else MODEL)
    if kind not in (HUMAN, MODEL):
        problems.append(f"'rater_kind' must be human or model, not {kind!r}.")
    criterion = row.get("criterion") or DEFAULT_CRITERION
    if not isinstance(criterion, str) or not is_slug(criterion):
        problems.append(f"'criterion' must be a slug, not {criterion!r}.")
    scale = row.get("scale")
    if scale not in (None, ""):
        bounds = _SCALE.match(str(scale))
        if bounds is None:
            problems.append(f"'scale' must read low-high (e.g. 1-5), not {scale!r}.")
        elif score is not None and not float(bounds[1]) <= score <= float(bounds[2]):
            problems.append(f"score {score:g} is outside its scale {scale}.")
    rationale = row.get("rationale") or ""
    if not isinstance(rationale, str):
        problems.append("'rationale' must be text.")
    variant = row.get("response_variant") or ""
    if not isinstance(variant, str):
        problems.append("'response_variant' must be text.")
    if problems or score is None:
        return problems
    # Interned: a file repeats few models, raters and criteria a million times, each read as a new string.
    prompt_id, model = intern(texts["prompt_id"]), intern(texts["model"])
    rater, criterion = intern(rater), intern(str(criterion))
    return ScoreRecord(line, prompt_id, model, rater, kind == HUMAN, criterion, score, rationale, intern(variant))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)
