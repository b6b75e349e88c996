"""Debate runs, their debates (one per pair of responses) and every agent's turn."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from evalhub.core.scaleeval.aids import AIDS
from evalhub.core.scaleeval.debate import ALL_ROUNDS, LAST_ROUND, MAJORITY, UNANIMOUS

BLIND_FIRST, ONE_STAGE = "blind_first", "one_stage"  # how people adjudicate a run's unresolved debates
FLOWS = ((BLIND_FIRST, "Blind first, then the aid"), (ONE_STAGE, "The debate shown from the start"))


def every_aid() -> list[str]:
    return list(AIDS)


class DebateRun(models.Model):
    name = models.CharField(max_length=200)
    benchmark = models.ForeignKey("catalog.Benchmark", on_delete=models.PROTECT, related_name="debate_runs")
    criterion = models.ForeignKey("catalog.Criterion", on_delete=models.PROTECT, related_name="debate_runs")
    model_a = models.ForeignKey("catalog.LanguageModel", on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey("catalog.LanguageModel", on_delete=models.PROTECT, related_name="+")
    category = models.CharField(max_length=100, blank=True, help_text="Only prompts of this category (blank: all).")
    variant = models.CharField(
        max_length=100,
        blank=True,
        help_text="Which responses of the two models: blank for imported ones, or a generation run's "
        "variant such as answer:1h (one hint tier).",
    )
    agents = models.JSONField(help_text="Provider specs, one per agent.")
    rounds = models.PositiveSmallIntegerField(default=3)
    consensus_rule = models.CharField(
        max_length=20, choices=[(UNANIMOUS, "Unanimous"), (MAJORITY, "Majority")], default=UNANIMOUS
    )
    history = models.CharField(
        max_length=10,
        choices=[(ALL_ROUNDS, "All previous rounds"), (LAST_ROUND, "Only the last round")],
        default=ALL_ROUNDS,
    )
    privileged_sources = models.JSONField(default=list, blank=True, help_text="Privileged fields shown to agents.")
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=512)
    seed = models.IntegerField(default=0)
    human_verdicts = models.PositiveSmallIntegerField(
        default=1, help_text="Independent human verdicts needed for each debate the agents leave unresolved."
    )
    tie_policy = models.CharField(
        max_length=20,
        choices=[("another", "Ask one more person"), ("admin", "Send to an admin")],
        default="another",
        help_text="What happens when the people disagree without a majority.",
    )
    adjudication_flow = models.CharField(
        max_length=20,
        choices=FLOWS,
        default=BLIND_FIRST,
        help_text="Blind first: people give a verdict before they see any aid, then keep or change it.",
    )
    aids = models.JSONField(
        default=every_aid,
        blank=True,
        help_text="Blind first: the aids an item may be assigned at random (debate, critique, none).",
    )
    # A labelling run that drew its pairs where the judge was least sure: every judged prompt's chance
    # (prompt id → π) of being drawn, so corrected estimates can weight its labels by 1/π (active
    # inference). Empty for agent runs and for uniform draws.
    labelling_chances = models.JSONField(default=dict, blank=True)
    # Started runs are jobs (kind "debate", chunks of debate ids): their state, controls, progress
    # and usage are the job's. A run without a job is a draft.
    job = models.OneToOneField("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="debate_run")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("debate_run_detail", args=[self.pk])

    @property
    def is_labelling(self) -> bool:
        """People's labels asked for directly: no agents, its debates straight in people's queue."""
        return not self.agents

    @property
    def is_draft(self) -> bool:
        """Made, not started: a labelling run has no job to start (its items are in the queue at once)."""
        return self.job_id is None and not self.is_labelling


class DebateStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    CONSENSUS = "consensus", "Consensus"
    UNRESOLVED = "unresolved", "Sent to adjudication"
    ADJUDICATED = "adjudicated", "Adjudicated"
    FAILED = "failed", "Failed"


def winner_for(verdict: int, swapped: bool) -> Winner:
    """Model A, model B or neither, from a verdict in the order shown (submission 1 is B's if swapped)."""
    if verdict == 0:
        return Winner.TIE
    return Winner.A if (verdict == 1) == (not swapped) else Winner.B


FINISHED_DEBATE = (DebateStatus.CONSENSUS, DebateStatus.UNRESOLVED, DebateStatus.ADJUDICATED)


class Winner(models.TextChoices):
    A = "a", "Model A"
    B = "b", "Model B"
    TIE = "tie", "Neither"


SHARE_OF_A = {Winner.A: 1.0, Winner.B: 0.0, Winner.TIE: 0.5}  # model A's share of an outcome, a tie half


class Debate(models.Model):
    """One pair under one run. `swapped` records the order shown: if set, submission 1 was B's response."""

    run = models.ForeignKey(DebateRun, on_delete=models.CASCADE, related_name="debates")
    prompt = models.ForeignKey("catalog.Prompt", on_delete=models.CASCADE, related_name="debates")
    response_a = models.ForeignKey("catalog.Response", on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey("catalog.Response", on_delete=models.CASCADE, related_name="+")
    swapped = models.BooleanField()
    status = models.CharField(max_length=20, choices=DebateStatus.choices, default=DebateStatus.PENDING)
    verdict = models.SmallIntegerField(null=True, blank=True, help_text="In the order shown: 1, 2 or 0.")
    winner = models.CharField(max_length=3, choices=Winner.choices, blank=True)
    rounds_used = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "prompt", "response_a", "response_b"], name="one_debate_per_pair")
        ]

    def __str__(self) -> str:
        return f"Debate {self.pk} on {self.prompt_id}"

    def get_absolute_url(self) -> str:
        return reverse("debate_detail", args=[self.pk])

    @property
    def group_name(self) -> str:
        from evalhub.debates.live import debate_group

        return debate_group(self.pk)

    @property
    def round_range(self) -> range:
        return range(self.run.rounds)

    @property
    def shown(self) -> tuple:
        """(submission 1, submission 2) as the agents saw them."""
        return (self.response_b, self.response_a) if self.swapped else (self.response_a, self.response_b)

    def winner_of(self, verdict: int) -> Winner:
        return winner_for(verdict, self.swapped)


class DebateTurn(models.Model):
    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="turns")
    round = models.PositiveSmallIntegerField()
    agent = models.PositiveSmallIntegerField(help_text="0-based; shown as Speaker agent+1.")
    agent_spec = models.CharField(max_length=300)
    text = models.TextField()
    verdict = models.SmallIntegerField(null=True, blank=True)
    reasked = models.BooleanField(default=False)
    rejected_text = models.TextField(blank=True, help_text="The first answer, when it had no verdict and was re-asked.")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_s = models.FloatField(default=0)
    cached = models.BooleanField(default=False)
    cost_usd = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "agent"]
        constraints = [
            models.UniqueConstraint(fields=["debate", "round", "agent"], name="one_turn_per_agent_and_round")
        ]

    def __str__(self) -> str:
        return f"Debate {self.debate_id} round {self.round} speaker {self.agent + 1}"

    @property
    def valid(self) -> bool:
        return self.verdict is not None

    @property
    def speaker(self) -> int:
        return self.agent + 1


GRADED = "graded"  # a judge run's scale: Figure 8's five graded verdicts
RUBRIC = "rubric"  # a judge run's scale: a YESciEval pairwise rubric rates each answer 1–5


RUBRIC_MARK = " · yescieval:"


def single_judge_name(spec: str, rubric: str = "") -> str:
    """How boards, the win-rate page and the judge lab name a single judge: its spec, and the YESciEval
    rubric it judged under where it judged under one (the same model under two rubrics is two judges)."""
    return f"{spec}{RUBRIC_MARK}{rubric}" if rubric else spec


def single_judge_of(name: str) -> tuple[str, str]:
    """(spec, rubric) of a single judge's name (`single_judge_name`'s inverse)."""
    spec, _, rubric = name.partition(RUBRIC_MARK)
    return spec, rubric


class JudgeRun(models.Model):
    """One LLM judge on the pairs of a debate run (ScaleEval, Section 5): the debate (or the
    people who settled it) is the reference the judge is measured against."""

    reference = models.ForeignKey(DebateRun, on_delete=models.CASCADE, related_name="judge_runs")
    judge = models.CharField(max_length=300, help_text="Provider spec.")
    criteria_variant = models.CharField(max_length=20, default="original")
    privileged_sources = models.JSONField(default=list, blank=True)
    samples = models.PositiveSmallIntegerField(
        default=1, help_text="k answers per pair; their majority is the verdict."
    )
    SCALES = [
        ("choice", "1 / 2 / neither (ScaleEval's judge prompt)"),
        (GRADED, "graded: A >> B … B >> A (Figure 8 of the privileged-information paper)"),
        (RUBRIC, "a YESciEval pairwise rubric: each answer rated 1–5, the higher preferred"),
    ]
    scale = models.CharField(max_length=10, choices=SCALES, default="choice")
    check_position = models.BooleanField(default=True, help_text="Also ask with the pair in the other order.")
    rubric = models.CharField(max_length=60, blank=True, help_text="The YESciEval pairwise rubric (scale 'rubric').")
    domain = models.CharField(max_length=40, blank=True, help_text="The YESciEval domain whose vocabulary is injected.")
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=512)
    seed = models.IntegerField(default=0)
    probabilities = models.BooleanField(
        default=False, help_text="Read each verdict's probability from the judge's token log-probabilities."
    )
    # A judge version's (evalhub.alignment): its name in the judge lab, instructions and worked examples.
    label = models.CharField(max_length=120, blank=True, help_text="The judge's name in reports; blank: its spec.")
    instructions = models.TextField(blank=True, help_text="Added to the judging prompt after the criteria.")
    examples = models.JSONField(default=list, blank=True, help_text="Worked examples asked before each pair.")
    held_out_of = models.ForeignKey(
        "catalog.LabelSplit",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="A judge improved on this split's train labels: the judge lab scores it on held-out pairs only.",
    )
    job = models.OneToOneField("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_run")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        if self.label:
            return self.label
        extras = [self.criteria_variant] if self.criteria_variant != "original" else []
        extras += ["privileged"] if self.privileged_sources else []
        extras += [f"k={self.samples}"] if self.samples > 1 else []
        extras += ["graded"] if self.scale == GRADED else []
        extras += [f"domain {self.domain}"] if self.domain else []
        extras += ["probabilities"] if self.probabilities else []
        return single_judge_name(self.judge, self.rubric) + (f" ({', '.join(extras)})" if extras else "")


class JudgeVerdict(models.Model):
    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="judge_verdicts")
    reversed_order = models.BooleanField(help_text="Shown in the opposite order to the debate's agents.")
    sample = models.PositiveSmallIntegerField()
    text = models.TextField()
    verdict = models.SmallIntegerField(null=True, blank=True, help_text="In the order this judge was shown.")
    grade = models.SmallIntegerField(
        null=True, blank=True, help_text="A graded run's answer, 2 (first much better) to -2, in the order shown."
    )
    reasked = models.BooleanField(default=False)
    # The judge's own probabilities of the three verdicts at its verdict's token, in the order shown
    # ({"first", "second", "tie"}); null where the run asked for none or the answer gave none.
    probabilities = models.JSONField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_s = models.FloatField(default=0)
    cached = models.BooleanField(default=False)

    class Meta:
        ordering = ["debate_id", "reversed_order", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge_run", "debate", "reversed_order", "sample"],
                name="one_verdict_per_judge_pair_order_sample",
            )
        ]

    def __str__(self) -> str:
        return f"{self.judge_run} on debate {self.debate_id}"


class CountedDebate(models.Model):
    """What one debate adds to the boards' counts now (evalhub.tallies): its battle, if settled, and
    its reference verdict for the judges. Plain ids, no foreign key: a deleted debate's row stays
    long enough for its counts to be taken away (see evalhub.debates.verdict_counts)."""

    debate_id = models.IntegerField(primary_key=True)
    run_id = models.IntegerField()
    model_a = models.CharField(max_length=100)
    model_b = models.CharField(max_length=100)
    criterion = models.CharField(max_length=100)
    scenario = models.CharField(max_length=200)
    benchmark = models.CharField(max_length=100)
    responses = models.CharField(max_length=100)
    swapped = models.BooleanField(default=False)
    source = models.CharField(max_length=30, blank=True, help_text="consensus or human: a counted battle.")
    outcome = models.CharField(max_length=3, blank=True)
    reference = models.SmallIntegerField(null=True, blank=True, help_text="The verdict judges are measured against.")

    def __str__(self) -> str:
        return f"debate {self.debate_id} as counted"


class JudgeMajority(models.Model):
    """One judge run's majority verdicts on one debate, in the debate's order, and what those calls
    used, as the boards' counts hold them now."""

    judge_run_id = models.IntegerField()
    debate_id = models.IntegerField(db_index=True)
    same = models.SmallIntegerField(null=True, blank=True)
    has_same = models.BooleanField(default=False)
    reversed = models.SmallIntegerField(null=True, blank=True, help_text="Mapped back to the debate's order.")
    has_reversed = models.BooleanField(default=False)
    calls = models.IntegerField(default=0)
    cached = models.IntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    latency_s = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judge_run_id", "debate_id"], name="one_majority_per_run_debate")
        ]

    def __str__(self) -> str:
        return f"judge run {self.judge_run_id} on debate {self.debate_id}: {self.same}"
