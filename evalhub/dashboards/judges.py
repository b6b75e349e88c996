"""The judges board: every LLM judge (a provider spec) measured every way evalhub measures judges.

- DHP discernment per benchmark (D_avg, D_min, plain and expert-weighted) and the YESciEval
  optimism report, from the summaries finished discernment jobs stored;
- agreement with the debate-plus-human reference (ScaleEval, Section 5): example-level (pooled
  over pairs), system-level (per debate run: do the most frequent verdicts agree), per
  criterion and scenario in the layout of ScaleEval's Table 4, under criteria prompt variants in
  the layout of Table 5, without and with privileged information side by side;
- position bias (how often the verdict flips when the pair is shown the other way round);
- what judging cost: calls, tokens, latency (and USD where the provider reported prices).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from django.db.models import Avg, Count, Q, Sum

from evalhub.core.prompts.criteria_variants import ORIGINAL, VARIANTS
from evalhub.core.statistics.agreement import Rate, system_agreement_of_counts
from evalhub.dashboards.counts import judge_tallies
from evalhub.dashboards.shapes import (
    AblationRow,
    AgreementLayout,
    CallCounts,
    JudgeRow,
    JudgesBoard,
    LayoutRow,
    RateCell,
)
from evalhub.debates.judging import REFERENCE_STATUSES
from evalhub.debates.models import Debate, DebateTurn, JudgeRun, single_judge_name
from evalhub.jobs.models import JobStatus
from evalhub.reads.caching import cached
from evalhub.reads.spec_names import spec_models
from evalhub.scoring.models import DiscernmentFamily, DiscernmentRun, JudgeScore

PLAIN, PRIVILEGED = "plain", "privileged"


def judges_board(stamp: str) -> JudgesBoard:
    return cached("judges", lambda: _compute(stamp), stamp=stamp)


def _compute(stamp: str) -> JudgesBoard:
    judges: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"dhp": [], "optimism": [], "agreement": {}, "robustness": {}, "flips": None, "usage": {}}
    )
    _discernment(judges)
    runs = _judge_runs()
    table4, table5 = _agreement(judges, runs)
    _usage(judges, runs)
    models = spec_models(set(judges))
    rows = [
        JudgeRow(
            judge=spec,
            model=models.get(spec),
            dhp=data["dhp"],
            optimism=data["optimism"],
            agreement=data["agreement"],
            robustness=data["robustness"],
            flips=data["flips"],
            usage=data["usage"],
            calls=data.get("calls"),
        )
        for spec, data in sorted(judges.items())
    ]
    return {
        "judges": rows,
        "table4": table4,
        "table5": table5,
        "variants": [ORIGINAL, *VARIANTS],
        "ablation": _privileged_ablation(runs),
    }


def _discernment(judges: dict[str, dict[str, Any]]) -> None:
    runs = (
        DiscernmentRun.objects.filter(job__status=JobStatus.SUCCEEDED)
        .select_related("job", "benchmark")
        .order_by("-job__finished_at", "-pk")
    )
    seen: set[tuple[str, str, int, str]] = set()
    for run in runs:
        result = run.job.result or {}
        if run.family == DiscernmentFamily.DHP:
            for judge, report in result.get("dhp", {}).get("judges", {}).items():
                key = ("dhp", judge, run.benchmark_id, run.task)
                if key in seen:
                    continue  # an older run of the same judge on the same benchmark and task
                seen.add(key)
                interval = result["dhp"].get("intervals", {}).get(judge, {})
                judges[judge]["dhp"].append(
                    {
                        "benchmark": run.benchmark.name,
                        "task": run.task,
                        "run": run.pk,
                        "job": run.job_id,
                        "weights": result.get("weights_source", ""),
                        "interval": interval,
                        **report["summary"],
                    }
                )
        else:
            for judge, rubrics in result.get("optimism", {}).items():
                key = ("yescieval", judge, run.benchmark_id, run.task)
                if key in seen or "all" not in rubrics:
                    continue
                seen.add(key)
                judges[judge]["optimism"].append(
                    {"benchmark": run.benchmark.name, "run": run.pk, "job": run.job_id, **rubrics["all"]}
                )


def _rate(rate: Rate | None) -> RateCell | None:
    if rate is None or not rate.total or rate.rate is None:
        return None
    return RateCell(rate=rate.rate, hits=rate.hits, total=rate.total)


def _privileged_ablation(runs: dict[int, dict[str, Any]]) -> list[AblationRow]:
    """Per judge and set of privileged sources (none included), the agreement of each of its runs on
    the original criteria, and their mean and standard deviation over runs — the privileged-information
    paper's Table 4 (its "standard deviation is computed with three random seeds"). Shown for judges
    run with at least two sets of sources or two seeds: an ablation needs something to compare."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, float, int]]] = defaultdict(list)
    for run in runs.values():
        judged = sum(t.judged for t in run["scenarios"].values())
        if run["criteria_variant"] != ORIGINAL or not judged:
            continue
        hits = sum(t.hits for t in run["scenarios"].values())
        key = (run["judge"], tuple(sorted(run["privileged_sources"] or ())))
        groups[key].append((run["seed"], hits / judged, judged))
    compared = {judge for judge, _ in groups}
    compared = {
        j
        for j in compared
        if sum(1 for g in groups if g[0] == j) > 1 or any(len(groups[g]) > 1 for g in groups if g[0] == j)
    }
    rows = []
    for (judge, sources), per_run in sorted(groups.items()):
        if judge not in compared:
            continue
        values = [agreement for _, agreement, _ in per_run]
        rows.append(
            AblationRow(
                judge=judge,
                sources=list(sources),
                runs=len(per_run),
                pairs=sum(pairs for *_, pairs in per_run),
                mean=statistics.fmean(values),
                sd=statistics.stdev(values) if len(values) > 1 else None,
                by_seed=sorted(per_run),
            )
        )
    return rows


def _judge_runs() -> dict[int, dict[str, Any]]:
    """Every single-judge run, with its counted tallies summed over scenarios (evalhub.tallies) and
    the number of pairs its reference has: a few rows per run, whatever the number of verdicts."""
    fields = ("id", "judge", "criteria_variant", "privileged_sources", "reference_id", "check_position", "seed")
    runs = {
        # "judge": its name on every board (a YESciEval rubric's judge apart from the same model's choices)
        run["id"]: {
            **run,
            "judge": single_judge_name(run["judge"], run.pop("rubric")),
            "criterion": run.pop("reference__criterion__name"),
            "scenarios": {},
        }
        for run in JudgeRun.objects.values(*fields, "rubric", "reference__criterion__name")
    }
    for tally in judge_tallies():
        if tally.judge_run_id in runs:
            runs[tally.judge_run_id]["scenarios"][tally.scenario] = tally
    references = (
        Debate.objects.filter(run_id__in={run["reference_id"] for run in runs.values()}, status__in=REFERENCE_STATUSES)
        .exclude(verdict=None)
        .order_by()
        .values("run_id")
        .annotate(pairs=Count("id"))
    )
    pairs = {row["run_id"]: row["pairs"] for row in references}
    for run in runs.values():
        run["reference_pairs"] = pairs.get(run["reference_id"], 0)
    return runs


def _agreement(
    judges: dict[str, dict[str, Any]], runs: dict[int, dict[str, Any]]
) -> tuple[AgreementLayout, AgreementLayout]:
    # (judge, variant, plain|privileged) → pooled counts; cells keyed also by (criterion, scenario).
    example: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    covered: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    system: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    flips: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    cells: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for run in runs.values():
        judge, variant = run["judge"], run["criteria_variant"]
        mode_key = PRIVILEGED if run["privileged_sources"] else PLAIN
        pooled = example[(judge, variant, mode_key)]
        tallies = run["scenarios"].values()
        # The same pairs as the run's meta-evaluation page (evalhub.core.statistics.agreement.judged_pairs),
        # counted as the verdicts were written (evalhub.debates.verdict_counts).
        judged = sum(t.judged for t in tallies)
        covered[(judge, variant, mode_key)][0] += judged
        covered[(judge, variant, mode_key)][1] += run["reference_pairs"]
        for scenario, tally in run["scenarios"].items():
            if tally.judged:
                cell = cells[(judge, variant, mode_key, run["criterion"], scenario)]
                cell[0] += tally.hits
                cell[1] += tally.judged
                pooled[0] += tally.hits
                pooled[1] += tally.judged
        predicted = [sum(getattr(t, f"predicted_{v}") for t in tallies) for v in (0, 1, 2)]
        expected = [sum(getattr(t, f"expected_{v}") for t in tallies) for v in (0, 1, 2)]
        agrees = system_agreement_of_counts(predicted, expected) if judged else None
        if agrees is not None:
            system[(judge, variant, mode_key)][0] += int(agrees)
            system[(judge, variant, mode_key)][1] += 1
        if run["check_position"]:
            flips[judge][0] += sum(t.flips for t in tallies)
            flips[judge][1] += sum(t.flip_pairs for t in tallies)

    for (judge, variant, mode_key), (hits, total) in example.items():
        if not total:
            continue
        entry = _rate(Rate(hits, total))
        if variant == ORIGINAL:
            s_hits, s_total = system.get((judge, variant, mode_key), (0, 0))
            judges[judge]["agreement"][mode_key] = {
                "example": entry,
                "coverage": _rate(Rate(*covered[(judge, variant, mode_key)])),
                "system": {"agrees": s_hits, "runs": s_total} if s_total else None,
            }
        if mode_key == PLAIN:
            judges[judge]["robustness"][variant] = entry
    for judge, (hits, total) in flips.items():
        judges[judge]["flips"] = _rate(Rate(hits, total))

    plain_judges = sorted({judge for (judge, _, mode_key, *_rest) in cells if mode_key == PLAIN})
    table4 = _layout(cells, plain_judges, [ORIGINAL])
    table5 = _layout(cells, plain_judges, [ORIGINAL, *VARIANTS])
    return table4, table5


def _layout(cells: dict[tuple[str, ...], list[int]], judges: list[str], variants: list[str]) -> AgreementLayout:
    """Rows (variant, criterion, scenario), one column per judge: ScaleEval Tables 4 and 5, plus an
    overall row per variant pooled over its scenarios."""
    keys = sorted(
        {(v, c, s) for (_, v, m, c, s) in cells if m == PLAIN and v in variants},
        key=lambda k: (variants.index(k[0]), k[1], k[2]),
    )
    rows: list[LayoutRow] = []
    for variant in variants:
        mine = [k for k in keys if k[0] == variant]
        if not mine:
            continue
        for _, criterion, scenario in mine:
            rows.append(
                LayoutRow(
                    variant=variant,
                    criterion=criterion,
                    scenario=scenario,
                    cells=[_rate(Rate(*cells.get((j, variant, PLAIN, criterion, scenario), (0, 0)))) for j in judges],
                )
            )
        totals = []
        for judge in judges:
            hits = sum(cells.get((judge, variant, PLAIN, c, s), (0, 0))[0] for _, c, s in mine)
            total = sum(cells.get((judge, variant, PLAIN, c, s), (0, 0))[1] for _, c, s in mine)
            totals.append(_rate(Rate(hits, total)))
        rows.append(LayoutRow(variant=variant, criterion="Average", scenario="Overall", cells=totals, overall=True))
    return AgreementLayout(judges=judges, rows=rows)


USAGE_FIELDS = ("calls", "cached", "input_tokens", "output_tokens", "latency_s")
USAGE = {
    "calls": Count("pk"),
    "cached": Count("pk", filter=Q(cached=True)),
    "input_tokens": Sum("input_tokens"),
    "output_tokens": Sum("output_tokens"),
    "latency_s": Avg("latency_s"),
}


def _usage(judges: dict[str, dict[str, Any]], runs: dict[int, dict[str, Any]]) -> None:
    """Calls, tokens and latency per spec: single-judge verdicts (counted per run as they were
    written), debate turns (as an agent), and the DHP / YESciEval scores it gave (one call each, two
    when the answer was asked for again)."""
    as_judge: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(USAGE_FIELDS, 0))
    for run in runs.values():
        for tally in run["scenarios"].values():
            for name in USAGE_FIELDS:
                as_judge[run["judge"]][name] += getattr(tally, name)
    for spec, usage in as_judge.items():
        if usage["calls"]:
            judges[spec]["usage"]["judge"] = {
                "calls": usage["calls"],
                "cached": usage["cached"],
                "input_tokens": usage["input_tokens"],
                "output_tokens": usage["output_tokens"],
                "latency_s": usage["latency_s"] / usage["calls"],
            }
    for row in DebateTurn.objects.values("agent_spec").annotate(**USAGE, cost_usd=Sum("cost_usd")):
        spec = row.pop("agent_spec")
        if spec in judges:  # debate agents that never judged alone have no row of their own
            judges[spec]["usage"]["agent"] = row
    scores = (
        JudgeScore.objects.order_by()
        .values("judge")
        .annotate(scores=Count("pk"), reasked=Count("pk", filter=Q(reasked=True)))
    )
    for row in scores:
        if row["judge"] in judges:
            judges[row["judge"]]["usage"]["scoring"] = {"calls": row["scores"] + row["reasked"]}
    for data in judges.values():
        parts = {kind: data["usage"].get(kind, {}).get("calls", 0) for kind in ("judge", "agent", "scoring")}
        data["calls"] = {"total": sum(parts.values()), **parts} if any(parts.values()) else None


def export_rows(board: JudgesBoard) -> list[dict[str, Any]]:
    """One line per judge: the summary columns of the page, flat."""
    out = []
    for row in board["judges"]:
        flat: dict[str, Any] = {"judge": row["judge"], "model": row["model"]}
        for entry in row["dhp"]:
            prefix = f"dhp.{entry['benchmark']}.{entry['task']}"
            flat.update({f"{prefix}.{k}": entry.get(k) for k in ("D_avg", "D_min", "D_avg_ew", "D_min_ew")})
        for mode_key in (PLAIN, PRIVILEGED):
            agreement = row["agreement"].get(mode_key)
            example = agreement["example"] if agreement else None
            system = agreement["system"] if agreement else None
            flat[f"agreement.{mode_key}.example"] = example["rate"] if example else None
            flat[f"agreement.{mode_key}.pairs"] = example["total"] if example else None
            flat[f"agreement.{mode_key}.system_agrees"] = system["agrees"] if system else None
            flat[f"agreement.{mode_key}.system_runs"] = system["runs"] if system else None
        for variant, cell in row["robustness"].items():
            flat[f"robustness.{variant}"] = cell["rate"] if cell else None
        flat["position_flip_rate"] = row["flips"]["rate"] if row["flips"] else None
        calls = row["calls"] or CallCounts(total=0, judge=0, agent=0, scoring=0)
        flat |= {
            "calls.total": calls["total"],
            "calls.judge": calls["judge"],
            "calls.agent": calls["agent"],
            "calls.scoring": calls["scoring"],
        }
        for entry in row["optimism"]:
            for severity in ("subtle", "extreme"):
                shift = entry.get(severity) or {}
                flat[f"optimism.{entry['benchmark']}.{severity}.retention"] = shift.get("retention")
                flat[f"optimism.{entry['benchmark']}.{severity}.optimistic_share"] = shift.get("optimistic_share")
        out.append(flat)
    return out
