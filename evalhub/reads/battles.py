"""Pairwise battles for the Arena-style leaderboard, from every place a pair was decided.

Sources (each battle says where it came from, and the board can be filtered on it):
- `consensus`: a debate whose agents agreed (ScaleEval);
- `human`: a debate the agents left unresolved and people settled (the final adjudication);
- `single_judge`: a single LLM judge's verdict on a debate's pair (the majority of its
  samples in the debate's order; the reversed order is there to measure position bias), with
  the original criteria prompt only: verdicts under gibberish or masked criteria measure the
  judge, not the models;
- `imported_people` / `imported_judges`: labels files' verdicts, by people (Arena's voters,
  MT-Bench's experts, …) or by model judges (AlpacaEval's annotators, …).

With no source ticked, a board counts what its other filters find (`default_sources`).

A verdict is about the two responses as they were shown; `Debate.winner` (and the same
mapping for judges) turns it into model A, model B or a tie, so order never leaks into a rating.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import NamedTuple

from django.db.models import Exists, OuterRef

from evalhub.catalog.label_counts import imported_battles, pairwise_labels
from evalhub.catalog.models import IMPORTED_VARIANT, LanguageModel
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.debates.models import Debate, DebateStatus, JudgeRun, Winner, single_judge_name, winner_for
from evalhub.debates.verdict_counts import BATTLE_FIELDS
from evalhub.reads.verdicts import judge_run_majorities
from evalhub.system.bounded_queries import where_in
from evalhub.tallies.models import CONSENSUS, HUMAN, IMPORTED_JUDGES, IMPORTED_PEOPLE, SINGLE_JUDGE

SOURCES = {
    CONSENSUS: "Debate consensus",
    HUMAN: "Human adjudication",
    SINGLE_JUDGE: "Single LLM judges",
    IMPORTED_PEOPLE: "Imported human labels",
    IMPORTED_JUDGES: "Imported judge verdicts",
}
DEFAULT_SOURCES = (CONSENSUS, HUMAN)
REFERENCE_SOURCES = (CONSENSUS, HUMAN, IMPORTED_PEOPLE)  # panels' and people's verdicts; the rest are judges'


def default_sources(present: Collection[str]) -> tuple[str, ...]:
    """The sources a board counts when none is ticked, from those with battles under its other filters:
    the panels' and people's verdicts where there are any, else the judges' (an AlpacaEval import has
    judge verdicts only); debates and people when there is nothing yet. Single judges' verdicts beside
    people's are what the judge lab measures against them, not more evidence on the board."""
    reference = tuple(source for source in SOURCES if source in present and source in REFERENCE_SOURCES)
    judges = tuple(source for source in SOURCES if source in present and source not in REFERENCE_SOURCES)
    return reference or judges or DEFAULT_SOURCES


OUTCOME: dict[str, str] = {Winner.A: "a", Winner.B: "b", Winner.TIE: "tie"}


class Battle(NamedTuple):  # a tuple: tens of thousands are made and cached per fingerprint
    model_a: str
    model_b: str
    outcome: str  # "a", "b" or "tie"
    source: str
    criterion: str
    scenario: str
    benchmark: str
    debate: int
    judge: str = ""  # the judge's provider spec, for single-judge battles
    responses: str = IMPORTED_VARIANT  # which responses were compared: imported ones, or a generation variant
    response_a: int = 0  # the two responses' ids (style control reads their texts)
    response_b: int = 0

    def for_model(self, slug: str) -> str | None:
        """'win', 'loss' or 'tie' from `slug`'s side; None if it did not take part."""
        if slug not in (self.model_a, self.model_b):
            return None
        if self.outcome == "tie":
            return "tie"
        return "win" if (self.outcome == "a") == (slug == self.model_a) else "loss"

    @property
    def opponent_pair(self) -> tuple[str, str, str]:
        return (self.model_a, self.model_b, self.outcome)


DEBATE_FIELDS = (*BATTLE_FIELDS, "response_a_id", "response_b_id")


def load_battles(stamp: str, with_judges: bool) -> list[Battle]:
    """Every settled debate as a battle, and (`with_judges`) every single judge's verdict on one."""
    battles: list[Battle] = []
    debates = {}
    for row in Debate.objects.order_by().values(*DEBATE_FIELDS).iterator(chunk_size=5000):
        if row["response_a__model__slug"] == row["response_b__model__slug"]:
            continue  # a model against itself is no evidence about its strength
        debates[row["id"]] = row
        if row["status"] in (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED) and row["winner"]:
            source = CONSENSUS if row["status"] == DebateStatus.CONSENSUS else HUMAN
            battles.append(_battle(row, OUTCOME[row["winner"]], source))
    if with_judges:
        battles.extend(_judge_battles(debates, judge_run_majorities(stamp)))
    battles.extend(_imported_battles())
    battles.sort(key=lambda b: (b.debate, b.source, b.judge))  # one order whatever the database returned
    return battles


def _battle(row: dict, outcome: str, source: str, judge: str = "") -> Battle:
    return Battle(
        row["response_a__model__slug"],
        row["response_b__model__slug"],
        outcome,
        source,
        row["run__criterion__slug"],
        row["prompt__category"] or "—",
        row["run__benchmark__slug"],
        row["id"],
        judge,
        row["run__variant"] or IMPORTED_VARIANT,
        row["response_a_id"],
        row["response_b_id"],
    )


def _judge_battles(debates: dict[int, dict], runs: dict[int, dict]) -> list[Battle]:
    battles = []
    for run in runs.values():
        if run["criteria_variant"] != ORIGINAL:
            continue
        for debate_id, verdict in run["same"].items():
            row = debates.get(debate_id)
            if row is None or verdict is None:
                continue  # no majority (or only invalid answers): no battle rather than a made-up tie
            battles.append(_battle(row, OUTCOME[winner_for(verdict, row["swapped"])], SINGLE_JUDGE, run["judge"]))
    return battles


def _imported_battles() -> list[Battle]:
    """Imported pairwise judgments (`import_judgments`): each person's label and each judge's verdict
    is one battle, as a single judge's is (the judge lab reads the same rows)."""
    return [
        Battle(key[0], key[1], outcome, key[2], key[3], key[4], key[5], 0, judge, key[6], r1, r2)
        for key, outcome, judge, r1, r2 in imported_battles(pairwise_labels())
    ]


def judge_battles(judge: str, stamp: str) -> list[Battle]:
    """One judge's battles, read from its own verdicts only (a board filtered to one judge costs that
    judge's labels, not everyone's): its imported labels (`judge` a model's or person's slug) and the
    majorities of its single-judge runs (`judge` a provider spec) on their debates' pairs."""
    battles = [
        Battle(key[0], key[1], outcome, key[2], key[3], key[4], key[5], 0, judge, key[6], r1, r2)
        for key, outcome, _, r1, r2 in imported_battles(pairwise_labels().filter(judge_model__slug=judge))
    ]
    runs = {pk: run for pk, run in judge_run_majorities(stamp).items() if run["judge"] == judge}
    if runs:
        ids = {debate for run in runs.values() for debate in run["same"]}
        found = where_in(Debate.objects.order_by().values(*DEBATE_FIELDS), "pk", ids)
        debates = {row["id"]: row for row in found if row["response_a__model__slug"] != row["response_b__model__slug"]}
        battles.extend(_judge_battles(debates, runs))
    battles.sort(key=lambda b: (b.debate, b.source, b.response_a, b.response_b, b.outcome))
    return battles


def battle_judges() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every judge a board can be filtered to, by group (people apart from model judges, as the win-rate
    picker shows them): [(group, [(judge id, name)])]. One query per group, a row per judge; a judge is
    listed once it has a verdict on a pair."""
    labelled = LanguageModel.objects.filter(Exists(pairwise_labels().filter(judge_model=OuterRef("pk"))))
    imported = {True: [], False: []}  # type: dict[bool, list[tuple[str, str]]]
    for slug, name, human in labelled.order_by("slug").values_list("slug", "display_name", "is_human"):
        imported[human].append((slug, name))
    runs = JudgeRun.objects.filter(criteria_variant=ORIGINAL).order_by("judge", "rubric").values_list("judge", "rubric")
    singles = dict.fromkeys(single_judge_name(spec, rubric) for spec, rubric in runs)
    groups = [
        ("Model judges (imported)", imported[False]),
        ("Single LLM judges", [(key, key) for key in singles]),
        ("People (imported)", imported[True]),
    ]
    return [(group, judges) for group, judges in groups if judges]


@dataclass(frozen=True)
class Filters:
    sources: tuple[str, ...] = DEFAULT_SOURCES
    criterion: str = ""
    scenario: str = ""
    benchmark: str = ""
    responses: str = ""  # a response variant (e.g. answer:1h, one hint tier), or IMPORTED_VARIANT; blank: all
    style: bool = False  # also fit with style control, and order the board by it
    interval: str = "bootstrap"  # or "sandwich": arena-rank's closed-form intervals
    reweighted: bool = False  # each battle weighs 1 / max(battles of its pair, 50), as arena-rank can
    judge: str = ""  # one judge's or person's verdicts only (an imported judge's slug, a single judge's spec)

    def with_sources(self, sources: tuple[str, ...]) -> Filters:
        return replace(self, sources=sources)

    @property
    def with_judges(self) -> bool:
        return SINGLE_JUDGE in self.sources

    @property
    def key(self) -> str:
        fields = [",".join(self.sources), self.criterion, self.scenario, self.benchmark, self.responses]
        return "|".join(
            [
                *fields,
                "style" if self.style else "",
                self.interval,
                "reweighted" if self.reweighted else "",
                self.judge,
            ]
        )

    def keep(self, battle: Battle) -> bool:
        return (
            battle.source in self.sources
            and (not self.criterion or battle.criterion == self.criterion)
            and (not self.scenario or battle.scenario == self.scenario)
            and (not self.benchmark or battle.benchmark == self.benchmark)
            and (not self.responses or battle.responses == self.responses)
            and (not self.judge or battle.judge == self.judge)
        )
