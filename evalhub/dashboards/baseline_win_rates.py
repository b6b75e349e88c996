"""Win rates against a baseline (AlpacaEval's leaderboard) for one judge on one benchmark.

Read from the pairwise judgments a judge gave, in imported files (e.g. AlpacaEval's annotations.json)
or in evalhub's own single-judge runs on debates (a judge named `run:SPEC`): every pair of the
baseline's response and another model's response to the same prompt. The judge's probability is used
where it gave one (AlpacaEval's fractional preference, a generic file's probability_a, a judge run's
token probabilities); a plain verdict counts 1, 0 or ½. A pair judged in both orders (or in several
samples) counts once, with the mean of the preferences. The arithmetic is evalhub.core.statistics.win_rates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import Length

from evalhub.catalog.models import Judgment, LanguageModel, Prompt
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.core.statistics.corrected_win_rates import CorrectedWinRate, JudgesOfModel, corrected_win_rate
from evalhub.core.statistics.estimators import CATEGORIES, OTHER_JUDGES, Correction
from evalhub.core.statistics.win_rates import Comparison
from evalhub.dashboards.judge_run_preferences import (
    IMPORTED,
    JUDGE_RUNS,
    SHARE_OF_FIRST,
    is_run_judge,
    run_judge_counts,
    runs_against_baseline,
)
from evalhub.debates.models import SHARE_OF_A, Debate, DebateRun, DebateStatus, Winner

# AlpacaEval's leaderboard columns, in its order, after the model's name.
COLUMNS = (
    "win_rate",
    "standard_error",
    "n_wins",
    "n_wins_base",
    "n_draws",
    "n_total",
    "discrete_win_rate",
    "avg_length",
    "length_controlled_winrate",
    "lc_standard_error",
)


@dataclass(frozen=True)
class Selection:
    benchmark: str
    judge: str
    baseline: str
    criterion: str = DEFAULT_CRITERION

    @property
    def key(self) -> str:
        return f"{self.benchmark}|{self.judge}|{self.baseline}|{self.criterion}"


def _judged_pairs():
    """Pairs with a verdict: an unreadable answer is left out, as AlpacaEval drops a missing preference."""
    return Judgment.objects.filter(
        judge_model__isnull=False, response_2__isnull=False, verdict__isnull=False, prompt_variant=ORIGINAL
    )


def choices() -> list[dict[str, Any]]:
    """Every (benchmark, judge, criterion) with judged pairs, imported or judged by evalhub's runs (the
    source named), and its likeliest baseline: the model in the most pairs (AlpacaEval's reference model
    is in every one)."""
    group = ("response__prompt__benchmark__slug", "judge_model__slug", "criterion__slug")
    pairs: Counter[tuple[str, str, str]] = Counter()
    seen: dict[tuple[str, str, str], Counter[str]] = {}
    people: set[str] = set()
    # Two grouped queries a source (a model's pairs in either position), whatever the number of groups.
    for side in ("response__model__slug", "response_2__model__slug"):
        rows = _judged_pairs().values_list(*group, "judge_model__is_human", side).annotate(n=Count("id")).order_by()
        for benchmark, judge, criterion, person, model, n in rows:
            key = (benchmark, judge, criterion)
            seen.setdefault(key, Counter())[model] += n
            if person:
                people.add(judge)
            if side == "response__model__slug":
                pairs[key] += n
    for key, model, n, first_side in run_judge_counts():
        seen.setdefault(key, Counter())[model] += n
        if first_side:
            pairs[key] += n
    return [
        {
            "benchmark": benchmark,
            "judge": judge,
            "judge_is_person": judge in people,
            "source": JUDGE_RUNS if is_run_judge(judge) else IMPORTED,
            "criterion": criterion,
            "pairs": pairs[(benchmark, judge, criterion)],
            "baseline": max(sorted(models), key=lambda m: models[m]),
            "models": sorted(models),
        }
        for (benchmark, judge, criterion), models in sorted(seen.items())
    ]


def first_choice(choices: list[dict[str, Any]]) -> dict[str, Any]:
    """What the page opens on when nothing is asked: the model judge with the most judged pairs (people's
    labels are what a judge is measured against, not the judge to read first)."""
    return max(choices, key=lambda choice: (not choice["judge_is_person"], choice["pairs"]))


Found = dict[tuple[str, int], list[tuple[float, int, int, Any]]]  # (model, prompt) → each judgment's reading


def _imported_against_baseline(selection: Selection, judge: str | None) -> tuple[dict[str, Found], set[str]]:
    """judge → (model, prompt) → each judgment's (preference for the model, its length, the baseline's,
    the prompt's difficulty), on the selection's benchmark and criterion, for every judge of an imported
    file (only `judge` and people, where named) in one query; and which of those judges are people."""
    judgments = _judged_pairs()
    if judge is not None:
        judgments = judgments.filter(Q(judge_model__slug=judge) | Q(judge_model__is_human=True))
    rows = (
        judgments.filter(response__prompt__benchmark__slug=selection.benchmark, criterion__slug=selection.criterion)
        .filter(Q(response__model__slug=selection.baseline) | Q(response_2__model__slug=selection.baseline))
        .annotate(length_1=Length("response__text"), length_2=Length("response_2__text"))
        .values_list(
            "judge_model__slug",
            "judge_model__is_human",
            "response__model__slug",
            "response_2__model__slug",
            "response__prompt_id",
            "verdict",
            "probability",
            "length_1",
            "length_2",
            "response__prompt__metadata__instruction_difficulty",
        )
        .order_by("pk")
    )
    by_judge: dict[str, Found] = defaultdict(lambda: defaultdict(list))
    persons: set[str] = set()
    for slug, person, first, second, prompt, verdict, probability, length_1, length_2, difficulty in rows.iterator(
        chunk_size=5000
    ):
        found = by_judge[slug]
        if person:
            persons.add(slug)
        share_first = probability if probability is not None else SHARE_OF_FIRST[verdict]
        if first == selection.baseline:
            found[(second, prompt)].append((1.0 - share_first, length_2, length_1, difficulty))
        else:
            found[(first, prompt)].append((share_first, length_1, length_2, difficulty))
    return dict(by_judge), persons


def _comparisons(found: Found) -> list[Comparison]:
    """One comparison per (model, prompt) against the baseline: a pair judged in both orders or in
    several samples counts once, with the mean of its preferences."""
    out = []
    for (model, prompt), seen in found.items():
        difficulty = seen[0][3]
        out.append(
            Comparison(
                model=model,
                prompt=str(prompt),
                preference=sum(s[0] for s in seen) / len(seen),
                model_length=seen[0][1],
                baseline_length=seen[0][2],
                difficulty=float(difficulty) if isinstance(difficulty, (int, float)) else None,
            )
        )
    return out


@dataclass(frozen=True)
class Judged:
    """What the boards against one baseline on one benchmark under one criterion are computed from, read
    at once: every judge's comparisons (evalhub's judge runs and the files' judges, people who judged in
    a file among them) and people's preferences. Three queries for any number of judges: reading each
    other judge once per judge's board made fifty judges cost 2,500 queries a page."""

    judges: dict[str, list[Comparison]]
    persons: frozenset[str]  # the judges who are people
    people: dict[tuple[str, str], float]  # (model, prompt) → people's preference for the model
    active: dict[str, tuple[list[dict[str, float]], set[str]]]  # active_rounds: any judge's pairs
    categories: dict[str, str]  # prompt → category (the strata of stratified PPI++)

    @cached_property
    def by_judge(self) -> dict[str, PerModel]:
        """judge → model → prompt → its preference: made once, however many boards use it."""
        return {judge: preferences(found) for judge, found in sorted(self.judges.items())}

    @cached_property
    def judges_of_model(self) -> dict[str, JudgesOfModel]:
        """model → every model judge's preferences for it (people's not), aligned by prompt once however
        many boards use them."""
        preferences: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
        for judge, found in self.by_judge.items():
            if judge not in self.persons:
                for model, prompts in found.items():
                    preferences[model][judge] = prompts
        return {model: JudgesOfModel.of(judges) for model, judges in preferences.items()}

    def others(self, judge: str, model: str) -> JudgesOfModel | tuple[()]:
        """The other model judges of `model`: an estimator combines several judges of the same pairs
        where each judged every one of them."""
        found = self.judges_of_model.get(model)
        return found.without(judge) if found is not None else ()


def judged_against(selection: Selection, judge: str | None = None) -> Judged:
    """Every judge's comparisons with the selection's baseline (only `judge`'s, where named) and people's."""
    imported, persons = _imported_against_baseline(selection, judge)
    runs: dict[str, Found] = {}
    if judge is None or is_run_judge(judge):
        runs = runs_against_baseline(judge, selection.benchmark, selection.criterion, selection.baseline)
    labels: dict[tuple[str, str], list[float]] = defaultdict(list)
    for person in persons:
        for (model, prompt), seen in imported[person].items():
            labels[(model, str(prompt))].extend(s[0] for s in seen)
    debates = (
        Debate.objects.filter(
            status=DebateStatus.ADJUDICATED,
            prompt__benchmark__slug=selection.benchmark,
            run__criterion__slug=selection.criterion,
        )
        .filter(Q(response_a__model__slug=selection.baseline) | Q(response_b__model__slug=selection.baseline))
        .exclude(winner="")
        .values_list("response_a__model__slug", "response_b__model__slug", "prompt_id", "winner")
    )
    for model_a, model_b, prompt, winner in debates.iterator(chunk_size=5000):
        share_a = SHARE_OF_A[Winner(winner)]
        model, share = (model_b, 1.0 - share_a) if model_a == selection.baseline else (model_a, share_a)
        labels[(model, str(prompt))].append(share)
    return Judged(
        judges={name: _comparisons(found) for name, found in {**imported, **runs}.items()},
        persons=frozenset(persons),
        people={key: sum(values) / len(values) for key, values in labels.items()},
        active=active_rounds(selection),
        categories=categories_of(selection),
    )


def comparisons(selection: Selection) -> list[Comparison]:
    """The selection's judge's comparisons: one per (model, prompt) against the baseline."""
    return judged_against(selection, selection.judge).judges.get(selection.judge, [])


PerModel = dict[str, dict[str, float]]  # model → prompt → preference for the model


def people_preferences(selection: Selection) -> dict[tuple[str, str], float]:
    """(model, prompt) → people's preference for the model over the baseline, averaged over every
    label people gave on that pair under the criterion: judgments imported from people (a judge marked
    human) and debates people adjudicated (the queue's final verdict)."""
    return judged_against(selection, selection.judge).people


def active_rounds(selection: Selection) -> dict[str, tuple[list[dict[str, float]], set[str]]]:
    """model → (each labelling run's chances, where it drew pairs where the judge was least sure; the
    prompts those runs drew), for the model against the baseline on the selection."""
    runs = DebateRun.objects.filter(
        benchmark__slug=selection.benchmark,
        criterion__slug=selection.criterion,
        model_a__slug=selection.baseline,
        agents=[],
    ).exclude(labelling_chances={})
    found: dict[str, tuple[list[dict[str, float]], set[str]]] = {}
    for model, chances in runs.order_by("id").values_list("model_b__slug", "labelling_chances"):
        found.setdefault(model, ([], set()))[0].append(chances)
    for model, prompt in Debate.objects.filter(run__in=runs).values_list("run__model_b__slug", "prompt_id"):
        found[model][1].add(str(prompt))
    return found


def preferences(found: list[Comparison]) -> PerModel:
    """model → prompt → the judge's preference, from its comparisons."""
    out: PerModel = defaultdict(dict)
    for comparison in found:
        out[comparison.model][comparison.prompt] = comparison.preference
    return out


def by_model(selection: Selection, judged: Judged | None = None) -> tuple[PerModel, PerModel]:
    """model → prompt → preference, the judge's and people's (from `judged`, read when not given)."""
    judged = judged or judged_against(selection, selection.judge)
    people: PerModel = defaultdict(dict)
    for (model, prompt), preference in judged.people.items():
        people[model][prompt] = preference
    return preferences(judged.judges.get(selection.judge, [])), people


def categories_of(selection: Selection) -> dict[str, str]:
    """prompt → its category, where the benchmark's prompts have one (the strata of stratified PPI++)."""
    rows = Prompt.objects.filter(benchmark__slug=selection.benchmark).exclude(category="")
    return {str(prompt): category for prompt, category in rows.values_list("id", "category")}


def combines_judges(correction: Correction) -> bool:
    """Whether the estimator `correction` asks for may use other judges' preferences."""
    return not correction.anytime and correction.reads(OTHER_JUDGES)


def corrected_rows(
    selection: Selection, correction: Correction | None = None, judged: Judged | None = None
) -> dict[str, CorrectedWinRate]:
    """Per model, the judge's win rate corrected by people's labels and people's own (see core.win_rates),
    by the estimator `correction` asks for (evalhub.core.statistics.estimators), from `judged` (every
    judge's comparisons with the baseline: read here when not given)."""
    correction = correction or Correction()
    if judged is None:  # the other judges are read only where the asked estimator can use them
        judged = judged_against(selection, None if combines_judges(correction) else selection.judge)
    judge, people = by_model(selection, judged)
    active = judged.active
    labelled = any(len(set(people.get(model, {})) & set(prompts)) >= 2 for model, prompts in judge.items())
    # Other judges and categories are used only where the asked estimator can use them.
    fixed_n = labelled and not correction.anytime
    categories = judged.categories if fixed_n and correction.reads(CATEGORIES) else {}
    with_others = fixed_n and correction.reads(OTHER_JUDGES)
    return {
        model: corrected_win_rate(
            model,
            prompts,
            people.get(model, {}),
            *active.get(model, ((), set())),
            categories=categories,
            others=judged.others(selection.judge, model) if with_others else (),
            estimator=correction.estimator,
            anytime=correction.anytime,
        )
        for model, prompts in judge.items()
    }


CORRECTED_COLUMNS = (
    "corrected_win_rate",
    "corrected_ci_low",
    "corrected_ci_high",
    "human_only_win_rate",
    "human_only_ci_low",
    "human_only_ci_high",
    "n_human",
    "effective_n",
    "ceiling_n",
    "estimator",
    "estimator_reason",
    "anytime",
)


def labelled_by_people(rows: list[dict[str, Any]]) -> bool:
    return any(row["corrected"]["n_human"] for row in rows)


def export_rows(rows: list[dict[str, Any]], corrected: bool = False) -> list[dict[str, Any]]:
    """AlpacaEval's CSV columns: the name first, the numbers in its order and units, then evalhub's notes;
    with `corrected`, the judge's win rate corrected by people's labels, people's own, and their n."""
    out = []
    for row in rows:
        line = {"name": row["name"], **{column: row[column] for column in COLUMNS}, "lc_note": row["lc_note"]}
        line["lc_prediction_sem"] = row["lc_prediction_sem"]  # AlpacaEval's own lc_standard_error
        if corrected:
            line.update({column: row["corrected"][column] for column in CORRECTED_COLUMNS})
            line["corrected_note"] = row["corrected"]["note"]
        out.append(line)
    return out


RULES = {
    "uniform": "at random",
    "least-sure": "where the judge is least sure",
}


def do_ask_people(
    user: Any, selection: Selection, model: str, count: int, seed: int, rule: str = "uniform"
) -> tuple[Any, int]:
    """Send about `count` of the model's judged but unlabelled pairs to people's adjudication queue as a
    labelling run; returns the run and how many pairs it holds (fewer when fewer are left).

    "uniform": exactly `count` drawn at random, so the corrected estimate stays unbiased as it is.
    "least-sure": every judged pair drawn with a chance rising with how far people are expected to be
    from the judge on it, learnt from their labels so far (Zrnic & Candès's active inference); the
    chances are kept on the run, and the corrected estimate weights each label by its inverse."""
    import numpy as np

    from evalhub.catalog.models import Benchmark, Criterion
    from evalhub.core.statistics.ppi import expected_error, labelling_probabilities
    from evalhub.debates.actions import do_create_labelling_run

    if rule not in RULES:
        raise ValueError(f"choose pairs {' or '.join(RULES.values())}, not {rule!r}.")
    judges, people_by_model = by_model(selection)
    judge, people = judges.get(model, {}), people_by_model.get(model, {})
    if not judge:
        raise ValueError(f"{selection.judge} compared no pair of {model!r} with {selection.baseline}.")
    candidates = sorted(int(prompt) for prompt in judge if prompt not in people)
    if not candidates:
        raise ValueError(f"people already labelled every pair of {model} the judge compared with the baseline.")
    rng = np.random.default_rng(seed)
    chances: dict[str, float] = {}
    if rule == "uniform":
        chosen = [int(p) for p in rng.choice(candidates, size=min(count, len(candidates)), replace=False)]
    else:
        known = [prompt for prompt in people if prompt in judge]
        prompts = sorted(judge, key=int)
        error = expected_error([judge[p] for p in known], [people[p] for p in known], [judge[p] for p in prompts])
        # The draw is over every judged pair (one already labelled needs no new label): as many new
        # labels as asked for, on average.
        budget = min(count, len(candidates)) * len(prompts) / len(candidates)
        chance = labelling_probabilities(error, budget=budget)
        chances = {prompt: float(c) for prompt, c in zip(prompts, chance, strict=True)}
        unlabelled = set(candidates)
        chosen = [int(p) for p, c in zip(prompts, chance, strict=True) if rng.uniform() < c and int(p) in unlabelled]
        if not chosen:
            raise ValueError("the draw chose no unlabelled pair this time (each has a small chance): ask again.")
    named = f"People's labels: {model} vs {selection.baseline} ({selection.judge}'s pairs)"[:180]
    asked = DebateRun.objects.filter(name__startswith=named, agents=[]).count()  # each ask its own name
    run = do_create_labelling_run(
        user,
        prompt_ids=chosen,
        name=f"{named}, ask {asked + 1}",
        benchmark=Benchmark.objects.get(slug=selection.benchmark),
        criterion=Criterion.objects.get(slug=selection.criterion),
        model_a=LanguageModel.objects.get(slug=selection.baseline),
        model_b=LanguageModel.objects.get(slug=model),
        seed=seed,
        labelling_chances=chances,
    )
    return run, len(chosen)
