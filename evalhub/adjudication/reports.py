"""Agreement among adjudicators, with the agents and with the debates; and the export."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from evalhub.adjudication.models import Adjudication, AdjudicationItem, ItemStatus
from evalhub.catalog.models import Judgment
from evalhub.core.scaleeval.aids import AidEffect, RevealedVerdict, aid_effects, majority
from evalhub.core.statistics.agreement import (
    Rate,
    cohen_kappa,
    fleiss_kappa,
    mode,
    percent_agreement,
    rating_table,
    unswap,
)
from evalhub.system.bounded_queries import where_in


@dataclass
class AgreementReport:
    items: int = 0
    resolved: int = 0
    per_person: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    fleiss: float | None = None
    fleiss_items: int = 0
    fleiss_raters: int = 0
    agents: list[dict[str, Any]] = field(default_factory=list)
    debate_majority: Rate | None = None


def _last_round_verdicts(item: AdjudicationItem) -> dict[int, int | None]:
    return _last_round_verdicts_of(item.debate)


def _last_round_verdicts_of(debate) -> dict[int, int | None]:
    turns = list(debate.turns.all())
    last = max((t.round for t in turns), default=0)
    return {t.agent: t.verdict for t in turns if t.round == last}


def agreement_report(run, withheld: Collection[int] = ()) -> AgreementReport:
    """`withheld`: debates the reader may not see yet (evalhub.debates.visibility), left out."""
    items = list(
        AdjudicationItem.objects.filter(debate__run=run)
        .exclude(debate_id__in=withheld)
        .select_related("debate")
        .prefetch_related("adjudications__user", "debate__turns")
    )
    report = AgreementReport(items=len(items), resolved=sum(i.status == ItemStatus.RESOLVED for i in items))
    by_person: dict[str, dict[int, int]] = defaultdict(dict)
    finals = {i.pk: i.final_verdict for i in items if i.final_verdict is not None}
    for item in items:
        for adjudication in item.adjudications.all():
            by_person[adjudication.user.get_username()][item.pk] = adjudication.verdict

    for person, verdicts in sorted(by_person.items()):
        shared = [i for i in verdicts if i in finals]
        report.per_person.append(
            {
                "person": person,
                "verdicts": len(verdicts),
                "with_final": percent_agreement([verdicts[i] for i in shared], [finals[i] for i in shared]),
            }
        )
    for (a, va), (b, vb) in combinations(sorted(by_person.items()), 2):
        common = sorted(set(va) & set(vb))
        if common:
            x, y = [va[i] for i in common], [vb[i] for i in common]
            report.pairs.append(
                {"a": a, "b": b, "n": len(common), "agreement": percent_agreement(x, y), "kappa": cohen_kappa(x, y)}
            )

    ratings = {i.pk: [a.verdict for a in i.adjudications.all()] for i in items}
    counts = Counter(len(v) for v in ratings.values() if len(v) >= 2)
    if counts:
        raters = counts.most_common(1)[0][0]  # Fleiss needs one rater count: the most common one
        table = rating_table({k: v for k, v in ratings.items() if len(v) == raters})
        report.fleiss, report.fleiss_items, report.fleiss_raters = fleiss_kappa(table), len(table), raters

    resolved = [i for i in items if i.final_verdict is not None]
    final_verdicts = [int(i.final_verdict) for i in resolved if i.final_verdict is not None]
    agent_verdicts = {i.pk: _last_round_verdicts(i) for i in resolved}
    agents = sorted({a for v in agent_verdicts.values() for a in v})
    for agent in agents:
        said = [agent_verdicts[i.pk].get(agent) for i in resolved]
        report.agents.append(
            {
                "agent": f"Speaker {agent + 1}: {run.agents[agent] if agent < len(run.agents) else ''}",
                "agreement": percent_agreement(said, final_verdicts),
            }
        )
    if resolved:
        majority = [mode(agent_verdicts[i.pk].values()) for i in resolved]
        report.debate_majority = percent_agreement(majority, final_verdicts)
    return report


def imported_gold(run, debates) -> dict[int, int]:
    """debate id → the verdict (in the agents' order) people's imported labels agree on for its pair
    under the run's criterion: every such label the same, in either order shown. A pair without one,
    or whose labels differ, has no gold."""
    shown = {
        (d.response_b_id, d.response_a_id) if d.swapped else (d.response_a_id, d.response_b_id): d.pk for d in debates
    }
    responses = {r for pair in shown for r in pair}
    labels: dict[int, set[int]] = defaultdict(set)
    found = where_in(
        Judgment.objects.filter(
            criterion_id=run.criterion_id, judge_model__is_human=True, verdict__isnull=False, response_2__isnull=False
        ).values_list("response_id", "response_2_id", "verdict"),
        "response_id",
        responses,
    )
    for first, second, verdict in found:
        if verdict is None:  # not asked for; for the type checker
            continue
        if (first, second) in shown:
            labels[shown[(first, second)]].add(verdict)
        elif (second, first) in shown:
            labels[shown[(second, first)]].add(unswap(verdict))
    return {debate: next(iter(verdicts)) for debate, verdicts in labels.items() if len(verdicts) == 1}


def aid_effect_report(run, withheld: Collection[int] = ()) -> list[AidEffect]:
    """How much each aid moved people in a blind-first run (evalhub.core.scaleeval.aids): every verdict
    given after a blind one, the agents' majority in their last round, and gold where imported people's
    labels agree on the pair."""
    adjudications = list(
        Adjudication.objects.filter(item__debate__run=run, blind__isnull=False)
        .exclude(item__debate_id__in=withheld)
        .select_related("blind", "item__debate")
        .prefetch_related("item__debate__turns")
    )
    debates = {a.item.debate.pk: a.item.debate for a in adjudications}
    gold = imported_gold(run, debates.values())
    agents = {pk: majority(list(_last_round_verdicts_of(debate).values())) for pk, debate in debates.items()}
    rows = [
        RevealedVerdict(
            item=a.item_id,
            aid=blind.aid,
            blind=blind.verdict,
            revealed=a.verdict,
            agents=agents[a.item.debate.pk],
            gold=gold.get(a.item.debate.pk),
        )
        for a in adjudications
        if (blind := a.blind) is not None
    ]
    return aid_effects(rows)


def export_rows(run, withheld: Collection[int] = ()) -> Iterator[dict[str, Any]]:
    """One row per item: the pair, the order each person saw, every verdict, the final label and its
    source; the items of `withheld` debates (the reader's, evalhub.debates.visibility) are left out."""
    items = (
        AdjudicationItem.objects.filter(debate__run=run)
        .exclude(debate_id__in=withheld)
        .select_related("debate__prompt", "debate__response_a__model", "debate__response_b__model")
        .prefetch_related("adjudications__user", "adjudications__blind")
        .order_by("id")
    )
    for item in items:
        debate = item.debate
        agents_first = debate.response_b if debate.swapped else debate.response_a

        yield {
            "item_id": item.pk,
            "debate_id": debate.pk,
            "prompt_id": debate.prompt.external_id,
            "model_a": debate.response_a.model.slug,
            "model_b": debate.response_b.model.slug,
            "agents_saw_first": agents_first.model.slug,
            "verdicts": [
                {
                    "person": a.user.get_username(),
                    "saw_first": debate.shown[1 if a.swapped else 0].model.slug,
                    "verdict": a.verdict,
                    "winner": debate.winner_of(a.verdict),
                    "confidence": a.confidence,
                    "seconds": round(a.seconds_spent, 1),
                    "flagged_fast": a.flagged_fast,
                    "notes": a.notes,
                    "at": a.created_at.isoformat(),
                    # Blind-first runs: the verdict before the aid, the aid, and whether it changed.
                    **_blind_columns(debate, a.blind),
                    "changed_after_reveal": a.changed_after_reveal,
                }
                for a in item.adjudications.all()
            ],
            "final_verdict": item.final_verdict,
            "final_winner": debate.winner_of(item.final_verdict) if item.final_verdict is not None else "",
            "final_source": item.final_source,
            "status": item.status,
        }


BLIND_COLUMNS = ("aid", "blind_verdict", "blind_winner", "blind_seconds", "blind_at")


def _blind_columns(debate, blind) -> dict[str, Any]:
    if blind is None:
        return dict.fromkeys(BLIND_COLUMNS)
    return {
        "aid": blind.aid,
        "blind_verdict": blind.verdict,
        "blind_winner": debate.winner_of(blind.verdict),
        "blind_seconds": round(blind.seconds_spent, 1),
        "blind_at": blind.created_at.isoformat(),
    }


VERDICT_COLUMNS = (
    "person",
    "saw_first",
    "verdict",
    "winner",
    "confidence",
    "seconds",
    "flagged_fast",
    "notes",
    "at",
    *BLIND_COLUMNS,
    "changed_after_reveal",
)


def export_verdict_rows(run, withheld: Collection[int] = ()) -> Iterator[dict[str, Any]]:
    """The CSV layout: one row per person's verdict, with its item's columns beside it (an item no
    one has judged yet is one row with the verdict columns empty)."""
    for item in export_rows(run, withheld):
        verdicts = item.pop("verdicts")
        for verdict in verdicts or [dict.fromkeys(VERDICT_COLUMNS)]:
            yield {
                **item,
                **{f"verdict_{name}" if name == "winner" else name: verdict[name] for name in VERDICT_COLUMNS},
            }
