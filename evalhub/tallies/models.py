"""The counts the boards are read from, kept up to date as verdicts are written (issue 23).

This app sits below every app that writes verdicts (catalog, debates, adjudication): they hand it
plain values, so it imports none of them. The rows are sums: a board reads a few hundred of them
instead of every verdict, and `python manage.py rebuild_tallies` recomputes them from scratch.
"""

from __future__ import annotations

from django.db import models

# Where a battle's verdict came from (the boards filter on it).
CONSENSUS, HUMAN, SINGLE_JUDGE = "consensus", "human", "single_judge"
IMPORTED_PEOPLE, IMPORTED_JUDGES = "imported_people", "imported_judges"

BATTLE_KEY = ("model_a", "model_b", "source", "criterion", "scenario", "benchmark", "responses")
BATTLE_COUNTS = ("wins_a", "wins_b", "ties")
JUDGE_KEY = ("judge_run_id", "scenario")
JUDGE_COUNTS = (
    "judged",  # pairs with a reference that the judge answered (an unreadable answer included)
    "hits",  # of those, the answers equal to the reference
    "predicted_0",
    "predicted_1",
    "predicted_2",  # the judge's majority verdicts on those pairs
    "expected_0",
    "expected_1",
    "expected_2",  # the reference's verdicts on the same pairs
    "flips",
    "flip_pairs",  # position bias: pairs judged both ways, and those whose verdict changed
    "calls",
    "cached",
    "input_tokens",
    "output_tokens",
)
JUDGE_SUMS = ("latency_s",)


class BattleCount(models.Model):
    """Wins of model A, of model B, and ties, for one kind of battle: a model pair (in the order the
    debate run names them), where the verdicts came from, and the board's filters."""

    model_a = models.CharField(max_length=100)
    model_b = models.CharField(max_length=100)
    source = models.CharField(max_length=30)
    criterion = models.CharField(max_length=100)
    scenario = models.CharField(max_length=200)
    benchmark = models.CharField(max_length=100)
    responses = models.CharField(max_length=100)
    wins_a = models.IntegerField(default=0)
    wins_b = models.IntegerField(default=0)
    ties = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=BATTLE_KEY, name="one_count_per_battle_kind")]

    def __str__(self) -> str:
        return f"{self.model_a} vs {self.model_b} ({self.source}): {self.wins_a}/{self.wins_b}/{self.ties}"


class JudgeTally(models.Model):
    """One single-judge run's agreement, position flips and usage on one scenario's pairs."""

    judge_run_id = models.IntegerField()  # a plain id: this app sits below the debates app
    scenario = models.CharField(max_length=200)
    judged = models.IntegerField(default=0)
    hits = models.IntegerField(default=0)
    predicted_0 = models.IntegerField(default=0)
    predicted_1 = models.IntegerField(default=0)
    predicted_2 = models.IntegerField(default=0)
    expected_0 = models.IntegerField(default=0)
    expected_1 = models.IntegerField(default=0)
    expected_2 = models.IntegerField(default=0)
    flips = models.IntegerField(default=0)
    flip_pairs = models.IntegerField(default=0)
    calls = models.IntegerField(default=0)
    cached = models.IntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    latency_s = models.FloatField(default=0.0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=JUDGE_KEY, name="one_tally_per_judge_run_scenario")]

    def __str__(self) -> str:
        return f"judge run {self.judge_run_id} · {self.scenario}: {self.hits}/{self.judged}"


class TallyState(models.Model):
    """One row: whether the counts must be rebuilt before they are next read (a model was renamed,
    say: the counts name models by slug)."""

    stale = models.BooleanField(default=False)

    def __str__(self) -> str:
        return "tallies (stale)" if self.stale else "tallies"
