"""Every verdict evalhub holds on a pair, as judge-lab labels: imported labels and judges' verdicts
(catalog judgments), single LLM judges' answers, each debate agent's first-round verdict, the
debate panel's consensus, and each person's adjudication.

A pair is keyed by (criterion, its two responses in id order), so the same two responses judged
on any screen meet; a verdict is turned into that order with the order its judge saw.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
from django.db.models import BigIntegerField, Case, ExpressionWrapper, F, Max, Value, When
from django.db.models.functions import Coalesce, Greatest, Least, Length

from evalhub.adjudication.models import Adjudication
from evalhub.catalog.models import Criterion, Judgment, LanguageModel, Prompt, Response
from evalhub.catalog.queries import Split, read_splits
from evalhub.core.alignment.split import HELD_OUT, TRAIN
from evalhub.core.judge_lab.measures import FIRST, NO_VERDICT, SECOND, TIE, Label, LabelArrays, Pair
from evalhub.core.judge_lab.report_types import (
    ADJUDICATED,
    AGENT,
    ALL_PAIRS,
    CONSENSUS,
    HELD_OUT_PAIRS,
    MODEL,
    PANEL,
    PERSON,
    DebateReference,
    JudgeInfo,
)
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.core.statistics.agreement import unswap
from evalhub.core.text.features import style_features
from evalhub.debates.models import BLIND_FIRST, Debate, DebateRun, DebateStatus, DebateTurn, JudgeRun, single_judge_name
from evalhub.debates.queries import judge_verdict_rows, judge_verdict_shares
from evalhub.reads.spec_names import spec_models
from evalhub.system.bounded_queries import in_slices, where_in
from evalhub.system.numeric_reads import numeric_table

BLIND, AFTER_REVEAL = "blind", "after_reveal"  # people's verdicts in the judge lab (Scope.people)
PEOPLES_VERDICTS = {
    BLIND: "blind: given before any aid",
    AFTER_REVEAL: "after the reveal: given having seen the aid",
}


@dataclass(frozen=True)
class Scope:
    benchmark: str = ""  # slug; blank: all
    criterion: str = ""  # slug; blank: all
    # Which of a person's verdicts in a blind-first run is theirs: the one before any aid (the default,
    # the agents not in it), or the one after the reveal (which the aid may have moved toward the agents).
    people: str = BLIND
    # A judge improved on people's train labels is scored on the held-out pairs only, unless asked
    # for every pair (its train agreement is optimistic: it was tuned on those labels).
    train_pairs: bool = False

    @property
    def key(self) -> str:
        people = "" if self.people == BLIND else f"|{self.people}"
        return f"{self.benchmark}|{self.criterion}{people}" + ("|train" if self.train_pairs else "")


PairKey = tuple[str, int, int]  # (criterion, lower response id, higher response id): see pair_key


@dataclass
class Observations:
    judges: dict[str, JudgeInfo] = field(default_factory=dict)
    rows: dict[Hashable, int] = field(default_factory=dict)  # pair → its row in every array
    arrays: dict[str, list[LabelArrays]] = field(default_factory=lambda: defaultdict(list))
    singles: dict[str, list[Label]] = field(default_factory=lambda: defaultdict(list))
    pairs: dict[Hashable, Pair] = field(default_factory=dict)  # in row order
    settled: dict[Hashable, DebateReference] = field(default_factory=dict)

    def row(self, item: Hashable) -> int:
        return self.rows.setdefault(item, len(self.rows))

    def add(
        self, judge: JudgeInfo, item: Hashable, verdict: int | None, first_shown: bool, p: float | None = None
    ) -> None:
        self.judges.setdefault(judge.id, judge)
        self.row(item)
        self.singles[judge.id].append(Label(judge.id, item, canonical(verdict, first_shown), first_shown, p))

    @property
    def labels(self) -> dict[str, Sequence[Label] | LabelArrays]:
        """Every judge's labels as arrays over the rows of `pairs`."""
        out: dict[str, Sequence[Label] | LabelArrays] = {}
        for judge in self.judges:
            parts = list(self.arrays.get(judge, ()))
            if self.singles.get(judge):
                parts.append(LabelArrays.of(self.singles[judge], self.rows))
            out[judge] = LabelArrays.concatenate(parts)
        return out


def pair_key(criterion: str, response_1: int, response_2: int) -> tuple[str, int, int]:
    return (criterion, min(response_1, response_2), max(response_1, response_2))


FLIPPED = {FIRST: SECOND, SECOND: FIRST, TIE: TIE}


def canonical(verdict: int | None, first_shown: bool) -> int:
    """A verdict in the order shown (1 first, 2 second, 0 neither) in the pair's id order."""
    if verdict is None:
        return NO_VERDICT
    if verdict == TIE or first_shown:
        return verdict
    return SECOND if verdict == FIRST else FIRST


def with_privileged(spec: str, sources: list[str]) -> tuple[str, tuple[str, ...]]:
    names = tuple(sorted(sources or ()))
    return (f"{spec} + {', '.join(names)}" if names else spec), names


def collect(scope: Scope) -> Observations:
    found = Observations()
    _imported(found, scope)
    debates = _debates(scope)
    _single_judges(found, debates, scope.train_pairs)
    # A blind-first run's debate running or waiting for people gives no agent's or person's verdict until
    # settled, for everyone: a person holding its item must not read them (evalhub.debates.visibility),
    # and the lab is one cached report for all.
    held = (DebateStatus.RUNNING, DebateStatus.UNRESOLVED)
    settled_or_open = {k: d for k, d in debates.items() if not (d.flow == BLIND_FIRST and d.status in held)}
    _agents_and_panels(found, settled_or_open, scope.people)
    _people(found, settled_or_open, scope.people)
    _pairs(found)
    return found


# A label's judge, verdict and the order shown packed into one integer by the database: judge * 8 +
# (verdict + 1) * 2 + (the lower response id shown first). Each value a row costs the database driver a
# Python object: six columns took 16.1 CPU-s to fetch at ten million labels, three 9.7.
_VERDICT_AND_ORDER = 8
ONE_KEY_BELOW = 2**62  # a pair's three ids packed in one integer below this (int64 holds the product)


def _imported(found: Observations, scope: Scope) -> None:
    rows = Judgment.objects.filter(
        response_2__isnull=False, judge_model__isnull=False, prompt_variant=ORIGINAL
    )  # an unreadable answer (no verdict) is read as NO_VERDICT: the judge answered and missed
    if scope.benchmark:
        rows = rows.filter(response__prompt__benchmark__slug=scope.benchmark)
    if scope.criterion:
        rows = rows.filter(criterion__slug=scope.criterion)
    # People's labels from a blind-first study carry the verdict before the aid: theirs, unless asked otherwise.
    verdicts = ("blind_verdict", "verdict") if scope.people == BLIND else ("verdict",)
    low, high = Least("response_id", "response_2_id"), Greatest("response_id", "response_2_id")
    base = (Response.objects.aggregate(top=Max("pk"))["top"] or 0) + 1
    criteria_top = (Criterion.objects.aggregate(top=Max("pk"))["top"] or 0) + 1
    # The pair as one integer, (criterion * base + low) * base + high, where the ids allow (they do below
    # some 2^24 responses): else its three parts.
    one_key = criteria_top * base * base < ONE_KEY_BELOW
    pair = (F("criterion_id") * base + low) * base + high if one_key else F("criterion_id") * base + low
    rows = rows.annotate(
        code=F("judge_model_id") * _VERDICT_AND_ORDER
        + (Coalesce(*verdicts, Value(NO_VERDICT)) + 1) * 2
        + Case(When(response_id__lt=F("response_2_id"), then=1), default=0),
        pair=ExpressionWrapper(pair, output_field=BigIntegerField()),
        high=high,
        given=Coalesce("probability", Value(-1.0)),
    )
    fields = ("code", "pair", "given") if one_key else ("code", "pair", "high", "given")
    dtype = np.dtype([(name, np.float64 if name == "given" else np.int64) for name in fields])
    table = numeric_table(rows, dtype)
    if not len(table):
        return
    # Each column in its own array and the table let go before the pairs are keyed: held through the
    # rest, the table and its temporaries took 2 GiB at ten million labels.
    code, given = table["code"], table["given"]
    pair_keys = table["pair"] if one_key else np.stack([table["pair"], table["high"]], axis=1)
    del table
    judge_pk, verdict, first_shown = code // _VERDICT_AND_ORDER, code % _VERDICT_AND_ORDER // 2 - 1, code % 2 == 1
    del code
    picks = np.where(
        first_shown | (verdict == TIE) | (verdict == NO_VERDICT), verdict, np.where(verdict == FIRST, SECOND, FIRST)
    )
    del verdict
    probability = np.where(given < 0, np.nan, given)
    probability = np.where(first_shown, probability, 1 - probability)
    del given
    if one_key:  # by hashing: sorting ten million keys took 2.5 CPU-s, hashing them 0.4
        inverse, keys = pd.factorize(pair_keys)
    else:
        keys, inverse = np.unique(pair_keys, return_inverse=True, axis=0)
    del pair_keys
    criteria = dict(Criterion.objects.values_list("pk", "slug"))
    triples = (
        ((int(k // (base * base)), int(k // base % base), int(k % base)) for k in keys.tolist())
        if one_key
        else ((int(k // base), int(k % base), int(h)) for k, h in keys.tolist())
    )
    row_of_key = np.array([found.row((criteria[c], lo, hi)) for c, lo, hi in triples], dtype=int)
    label_rows = row_of_key[inverse.ravel()]
    del inverse
    judges = {
        pk: JudgeInfo(slug, slug, PERSON if human else MODEL, model=None if human else slug)
        for pk, slug, human in where_in(
            LanguageModel.objects.values_list("pk", "slug", "is_human"), "pk", np.unique(judge_pk).tolist()
        )
    }
    # Stable: each judge's labels stay in the order given; numpy sorts 16-bit keys by radix (ten times faster).
    order = np.argsort(judge_pk.astype(np.uint16) if judge_pk.max() < 2**16 else judge_pk, kind="stable")
    starts = np.flatnonzero(np.r_[True, judge_pk[order][1:] != judge_pk[order][:-1]])
    for members in np.split(order, starts[1:]):
        judge = judges[int(judge_pk[members[0]])]
        found.judges.setdefault(judge.id, judge)
        found.arrays[judge.id].append(
            LabelArrays(label_rows[members], picks[members], first_shown[members], probability[members])
        )


@dataclass(frozen=True)
class _Debate:
    criterion: str
    response_a: int
    response_b: int
    swapped: bool
    status: str
    verdict: int | None
    run: int
    prompt: int = 0
    flow: str = ""

    @property
    def item(self) -> tuple[str, int, int]:
        return pair_key(self.criterion, self.response_a, self.response_b)

    def first_shown(self, reversed_order: bool = False) -> bool:
        """Whether the pair's lower response id was shown first (agents' order, or its reverse)."""
        shown_first = self.response_b if self.swapped != reversed_order else self.response_a
        return shown_first == min(self.response_a, self.response_b)


def _debates(scope: Scope) -> dict[int, _Debate]:
    # A model against itself says nothing about a judge's preferences between models.
    rows = Debate.objects.exclude(response_a__model_id=F("response_b__model_id"))
    if scope.benchmark:
        rows = rows.filter(run__benchmark__slug=scope.benchmark)
    if scope.criterion:
        rows = rows.filter(run__criterion__slug=scope.criterion)
    fields: tuple[str, ...] = ("id", "run__criterion__slug", "response_a_id", "response_b_id", "swapped", "status")
    fields += ("verdict", "run_id", "prompt_id", "run__adjudication_flow")
    return {row[0]: _Debate(*row[1:]) for row in rows.order_by().values_list(*fields).iterator(chunk_size=5000)}


# Who reads a split's pairs: whatever tunes a judge (its train prompts), or the judge lab and the
# comparisons of versions scoring a judge improved on it (its held-out prompts).
TUNING, SCORING = "tuning", "scoring"


def admitted(split: Split, prompt: int, use: str) -> bool:
    """The held-out rule, applied here and nowhere else: a tuner reads the split's train prompts only, and
    a judge improved on the split is scored on its held-out prompts only. A prompt added since the split
    is in neither part, so it is read by neither."""
    return split.part(prompt) == (TRAIN if use == TUNING else HELD_OUT)


def _single_judges(found: Observations, debates: dict[int, _Debate], train_pairs: bool = False) -> None:
    runs = {
        run["id"]: run
        for run in JudgeRun.objects.filter(criteria_variant=ORIGINAL).values(
            "id", "judge", "privileged_sources", "samples", "label", "held_out_of_id", "rubric"
        )
    }
    splits = read_splits({run["held_out_of_id"] for run in runs.values() if run["held_out_of_id"]})
    if not runs:
        return
    models = spec_models({run["judge"] for run in runs.values()})
    shares = judge_verdict_shares()
    grouped: dict[tuple[int, int, bool], list[int | None]] = defaultdict(list)
    for run_id, debate_id, reversed_order, verdict in judge_verdict_rows():
        if run_id in runs and debate_id in debates:
            grouped[(run_id, debate_id, reversed_order)].append(verdict)
    for (run_id, debate_id, reversed_order), verdicts in grouped.items():
        run, debate = runs[run_id], debates[debate_id]
        split = run["held_out_of_id"]
        if split and not train_pairs and not admitted(splits[split], debate.prompt, SCORING):
            continue  # an improved judge's train pairs: it was tuned on their labels
        judge_id, privileged = with_privileged(
            single_judge_name(run["judge"], run["rubric"]), run["privileged_sources"]
        )
        if run["label"]:  # a judge version (evalhub.alignment): its own name, not its spec's
            judge_id = run["label"]
        info = JudgeInfo(
            judge_id,
            judge_id,
            MODEL,
            model=models.get(run["judge"]),
            base=run["judge"] if privileged and not run["label"] else None,
            privileged=privileged,
            improved=(ALL_PAIRS if train_pairs else HELD_OUT_PAIRS) if split else "",
            version_of=run["label"].rsplit(" v", 1)[0] if run["label"] else "",
        )
        first_shown = debate.first_shown(reversed_order)
        # The judge's own probabilities where it gave them (its token log-probabilities), else the vote
        # share of its k samples.
        if own := shares.get((run_id, debate_id, reversed_order)):
            share: float | None = sum(own) / len(own)
        else:
            share = _first_share(verdicts) if run["samples"] > 1 else None
        probability = None if share is None else (share if first_shown else 1 - share)  # of the pair's response 1
        for verdict in verdicts:
            found.add(info, debate.item, verdict, first_shown, probability)


def _first_share(verdicts: list[int | None]) -> float | None:
    """k samples' vote share for the response shown first (a tie counts half); None if none was read."""
    read = [v for v in verdicts if v is not None]
    if not read:
        return None
    return (sum(v == FIRST for v in read) + 0.5 * sum(v == TIE for v in read)) / len(read)


def _agents_and_panels(found: Observations, debates: dict[int, _Debate], people: str = BLIND) -> None:
    runs = {debate.run for debate in debates.values()}
    fields = ("id", "agents", "privileged_sources", "rounds")
    settings = {run["id"]: run for run in where_in(DebateRun.objects.values(*fields), "pk", runs)}
    # Debates people settled with a verdict given after the reveal: their blind verdicts are the reference.
    given = Adjudication.objects.filter(blind__isnull=False)
    blind_given = (
        set(where_in(given.values_list("item__debate_id", flat=True), "item__debate_id", sorted(debates)))
        if people == BLIND
        else set()
    )
    models = spec_models({spec for run in settings.values() for spec in run["agents"]})
    turns = DebateTurn.objects.filter(round__lte=1).order_by("debate_id", "round", "agent")
    by_round: dict[int, dict[int, list[int | None]]] = defaultdict(lambda: defaultdict(list))
    for debate_id, round_, spec, verdict in where_in(
        turns.values_list("debate_id", "round", "agent_spec", "verdict"), "debate_id", sorted(debates)
    ):
        by_round[debate_id][round_].append(verdict)
        if round_ != 0:
            continue
        debate = debates[debate_id]
        name, privileged = with_privileged(spec, settings[debate.run]["privileged_sources"])
        info = JudgeInfo(
            f"agent:{name}",
            f"{name} (debate agent, first round)",
            AGENT,
            model=models.get(spec),
            base=f"agent:{spec}" if privileged else None,
            privileged=privileged,
        )
        found.add(info, debate.item, verdict, debate.first_shown())
    _multi_llm_consistency(found, debates, settings, by_round)
    for debate_id, debate in debates.items():
        if debate.verdict is None:
            continue
        if debate.status == DebateStatus.CONSENSUS:
            agents = ", ".join(settings[debate.run]["agents"])
            name, privileged = with_privileged(f"Debate panel ({agents})", settings[debate.run]["privileged_sources"])
            base = f"panel:Debate panel ({agents})" if privileged else None
            info = JudgeInfo(f"panel:{name}", name, PANEL, base=base, privileged=privileged)
            found.add(info, debate.item, debate.verdict, debate.first_shown())
        if debate.status in (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED):
            how = CONSENSUS if debate.status == DebateStatus.CONSENSUS else ADJUDICATED
            if how == ADJUDICATED and debate_id in blind_given:
                continue
            found.settled[debate.item] = DebateReference(canonical(debate.verdict, debate.first_shown()), how)


def _multi_llm_consistency(
    found: Observations,
    debates: dict[int, _Debate],
    settings: Mapping[int, Mapping[str, Any]],
    by_round: dict[int, dict[int, list[int | None]]],
) -> None:
    """ScaleEval's multi-LLM consistency baseline (Section 5, Q1): every agent through two rounds of
    debate, the verdict the one given most often in the second round (the first, when the agents
    agreed there and the debate stopped); no verdict when two verdicts tie for most. Only runs of at
    least two rounds have it."""
    for debate_id, rounds in by_round.items():
        debate = debates[debate_id]
        run = settings[debate.run]
        if run["rounds"] < 2:
            continue
        verdicts = [v for v in rounds.get(1) or rounds.get(0, []) if v is not None]
        counted = Counter(verdicts).most_common()
        verdict = counted[0][0] if counted and (len(counted) == 1 or counted[0][1] > counted[1][1]) else None
        agents = ", ".join(run["agents"])
        name, privileged = with_privileged(f"Multi-LLM consistency ({agents})", run["privileged_sources"])
        base = f"multi:Multi-LLM consistency ({agents})" if privileged else None
        found.add(
            JudgeInfo(f"multi:{name}", name, PANEL, base=base, privileged=privileged),
            debate.item,
            verdict,
            debate.first_shown(),
        )


def _people(found: Observations, debates: dict[int, _Debate], people: str = BLIND) -> None:
    rows = Adjudication.objects.values_list(
        "pk", "item__debate_id", "user__username", "verdict", "swapped", "blind__verdict"
    )
    for _, debate_id, username, final, swapped, blind in sorted(where_in(rows, "item__debate_id", debates)):
        # A blind-first run's person: their blind verdict unless the scope asks for the one after the reveal.
        verdict = blind if blind is not None and people == BLIND else final
        debate = debates[debate_id]
        info = JudgeInfo(f"user:{username}", username, PERSON)
        # Stored in the agents' order; the person saw the reverse when `swapped` (position bias reads that).
        found.add(info, debate.item, unswap(verdict) if swapped else verdict, debate.first_shown(swapped))


IDS_PER_QUERY = 100_000  # ids sent as one parameter (InIntegers): the bound is the statement's memory


def _pairs(found: Observations) -> None:
    for item in found.settled:
        found.row(item)
    keys = [cast(PairKey, item) for item in found.rows]  # every row is a pair_key
    wanted = np.array([key[1:] for key in keys], dtype=np.int64).reshape(-1, 2)  # each pair's two responses
    ids = np.unique(wanted)
    # Lengths in characters, counted by the database: the texts themselves never leave it, except where a
    # judge's formatting bias is measured (below). Numbers straight from the cursor, the models' slugs and
    # the prompts' categories looked up after: 800,000 responses as Django rows of slugs and categories
    # were 7 of a refresh's CPU-seconds at ten million labels.
    fields = ("id", "prompt_id", "model_id", "length")
    rows = Response.objects.annotate(length=Length("text"))
    dtype = np.dtype([(name, np.int64) for name in fields])
    parts = [numeric_table(rows.filter(pk__in_integers=part), dtype) for part in in_slices(ids, IDS_PER_QUERY)]
    table = np.concatenate([np.empty(0, dtype=dtype), *parts])
    table = table[np.argsort(table["id"])]
    at = np.minimum(np.searchsorted(table["id"], wanted), max(len(table) - 1, 0))
    if len(table) < len(ids) or (table["id"][at] != wanted).any():
        raise LookupError("responses were deleted while the judge lab read their labels; the next refresh reads again")
    prompt, model, length = (table[name][at] for name in ("prompt_id", "model_id", "length"))
    slugs = dict(LanguageModel.objects.values_list("pk", "slug"))
    categorised = Prompt.objects.exclude(category="").values_list("pk", "category")
    categories = {
        pk: category
        for part in in_slices(np.unique(prompt[:, 0]), IDS_PER_QUERY)
        for pk, category in categorised.filter(pk__in_integers=part)
    }
    formatting = _formatting(found, keys)
    for item, (prompt_1, _), (model_1, model_2), (length_1, length_2) in zip(
        keys, prompt.tolist(), model.tolist(), length.tolist(), strict=True
    ):  # in row order, which the arrays index
        _, low, high = item
        found.pairs[item] = Pair(
            cluster=prompt_1,
            length_1=length_1,
            length_2=length_2,
            model_1=slugs[model_1],
            model_2=slugs[model_2],
            category=categories.get(prompt_1, ""),
            formatting_1=formatting.get(low, 0),
            formatting_2=formatting.get(high, 0),
        )


def _formatting(found: Observations, keys: list[PairKey]) -> dict[int, int]:
    """Markdown elements (headers, list items, bold spans) of the responses of the pairs judged by a
    judge that has a sibling with privileged information, or by that sibling: their formatting bias is
    measured with and without (the privileged-information paper's Table 2); no other text is read."""
    compared = {judge.base for judge in found.judges.values() if judge.privileged and judge.base}
    compared |= {judge.id for judge in found.judges.values() if judge.base in compared}
    rows: set[int] = set()
    for judge in compared:
        rows.update(int(row) for part in found.arrays.get(judge, ()) for row in part.rows)
        rows.update(found.rows[label.item] for label in found.singles.get(judge, ()))
    ids = {response for row in rows for response in keys[row][1:]}
    texts = where_in(Response.objects.values_list("id", "text"), "pk", sorted(ids))
    return {pk: sum(style_features(text)[1:]) for pk, text in texts}
