"""GEM runs: configuration, per-pair scores, per-row problems, derived texts (chunks are the job's)."""

from __future__ import annotations

from django.db import models

from evalhub.catalog.models import Benchmark, LanguageModel, Response
from evalhub.jobs.models import Job


class GemVariant(models.TextChoices):
    # GEM, Section 3.2 and Section 5.
    RAW = "gem-raw", "GEM-raw"
    GEM = "gem", "GEM"
    ABSTRACT = "gem-s-abstract", "GEM-S (abstract)"
    ASSW = "gem-s-assw", "GEM-S (ASSW)"


PREPROCESSED_VARIANTS = (GemVariant.GEM, GemVariant.ABSTRACT, GemVariant.ASSW)
# Prompts per chunk of a GEM or judge run, unless the caller chooses: a chunk is what one worker takes.
DEFAULT_CHUNK_PROMPTS = 10


class GemRun(models.Model):
    """One GEM job's configuration and counters; the job row carries status and progress."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="gem_run")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="gem_runs")
    prompt_ids = models.JSONField(default=list, blank=True, help_text="A subset of prompts; empty means all.")
    candidate_models = models.ManyToManyField(LanguageModel, related_name="gem_runs_as_candidate")
    reference_models = models.ManyToManyField(LanguageModel, related_name="gem_runs_as_reference")
    variants = models.JSONField(default=list)
    evaluation_lm = models.CharField(max_length=500, help_text="A log-probability scorer spec.")
    dtype = models.CharField(max_length=20, default="auto")
    device = models.CharField(max_length=20, blank=True)
    preprocessing_lm = models.CharField(max_length=500, blank=True, help_text="Chat provider for C.1 and C.4.")
    use_imported_preprocessing = models.BooleanField(
        default=True, help_text="Use a response's metadata['preprocessed'] text when it has one."
    )
    validation_strategies = models.JSONField(default=list, blank=True)
    validation_lm = models.CharField(max_length=500, blank=True, help_text="Chat provider for LLM-based strategies.")
    examiner_lm = models.CharField(
        max_length=500, blank=True, help_text="Chat provider for the LMExaminer baseline (GEM, Appendix D.1)."
    )
    prompt_version = models.CharField(max_length=100)
    candidate_variant = models.CharField(
        max_length=100,
        blank=True,
        help_text="Only candidate responses of this variant (imported, answer:0h …); blank: all.",
    )
    seed = models.IntegerField(default=0)
    bootstrap = models.BooleanField(default=False)
    pairs_done = models.PositiveIntegerField(default=0)
    tokens_scored = models.PositiveBigIntegerField(default=0)
    scoring_seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"GEM run {self.pk} on {self.benchmark}"

    @property
    def chunks(self):
        return self.job.chunks

    @property
    def issues(self):
        return self.job.row_issues


class GemPairScore(models.Model):
    """log P(y | C.2(s, x)) and log P(y | C.2(s, "Not Available")) for one ordered pair."""

    run = models.ForeignKey(GemRun, on_delete=models.CASCADE, related_name="pair_scores")
    variant = models.CharField(max_length=20, choices=GemVariant.choices)
    candidate = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    reference = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    conditional = models.FloatField()
    marginal = models.FloatField()
    pmi = models.FloatField()
    tokens = models.PositiveIntegerField()
    truncated = models.BooleanField(default=False, help_text="The candidate was cut to fit the context.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "candidate", "reference", "variant"], name="one_score_per_pair_and_variant"
            ),
            models.CheckConstraint(condition=~models.Q(candidate=models.F("reference")), name="gem_pair_is_two"),
        ]
        indexes = [models.Index(fields=["run", "variant"])]

    def __str__(self) -> str:
        return f"{self.variant}: {self.candidate_id} → {self.reference_id} = {self.pmi:.3f}"


class ExaminerScore(models.Model):
    """The LMExaminer baseline's 0–10 score of one candidate response (GEM, Appendix D.1)."""

    run = models.ForeignKey(GemRun, on_delete=models.CASCADE, related_name="examiner_scores")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    raw = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "response"], name="one_examiner_score_per_response")]

    def __str__(self) -> str:
        return f"LMExaminer {self.score} for {self.response_id}"


class DiscernmentFamily(models.TextChoices):
    DHP = "dhp", "DHP discernment"
    YESCIEVAL = "yescieval", "YESciEval optimism bias"


class ScoringMode(models.TextChoices):
    GENERATE = "generate", "Generate k times and average"
    PROBABILITY = "probability", "Expected score from the next-token distribution (local models)"


class DiscernmentRun(models.Model):
    """Judges score originals and their perturbations (DHP) or adversarial variants (YESciEval)."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="discernment_run")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="discernment_runs")
    family = models.CharField(max_length=20, choices=DiscernmentFamily.choices)
    task = models.CharField(max_length=50, help_text="A survey template key: dhp-summarization, …, or yescieval.")
    shape = models.CharField(max_length=30, default="default", help_text="Dataset shape for DHP's k (Table 2).")
    target_models = models.ManyToManyField(LanguageModel, related_name="discernment_runs")
    target_variant = models.CharField(
        max_length=100,
        blank=True,
        help_text="Only target responses of this variant (imported, answer:0h …); blank: all.",
    )
    perturbations = models.JSONField(help_text="[[name, severity], …]")
    metrics = models.JSONField()
    judges = models.JSONField(help_text="Provider specs.")
    repeats = models.PositiveSmallIntegerField(default=5)
    mode = models.CharField(max_length=20, choices=ScoringMode.choices, default=ScoringMode.GENERATE)
    temperature = models.FloatField(default=0.0)
    perturbation_lm = models.CharField(max_length=500, blank=True)
    weights = models.JSONField(null=True, blank=True, help_text="Expert weights {perturbation: {metric: w}}.")
    weights_source = models.CharField(max_length=200, blank=True)
    seed = models.IntegerField(default=0)
    domain = models.CharField(
        max_length=40, blank=True, default="", help_text="YESciEval: the domain whose vocabulary the package injects."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.get_family_display()} run {self.pk} on {self.benchmark}"


class JudgeScore(models.Model):
    """One judge's score of one text under one metric (one repeat); invalid answers keep no score."""

    run = models.ForeignKey(DiscernmentRun, on_delete=models.CASCADE, related_name="scores")
    judge = models.CharField(max_length=500)
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=50)
    repeat = models.PositiveSmallIntegerField(default=0)
    score = models.FloatField(null=True, blank=True)
    valid = models.BooleanField(default=True)
    reasked = models.BooleanField(default=False)
    digit_mass = models.FloatField(null=True, blank=True, help_text="Probability mass on '1'..'5' (probability mode).")
    rationale = models.TextField(blank=True)
    raw = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "judge", "response", "metric", "repeat"], name="one_score_per_judge_text_metric_repeat"
            ),
            models.CheckConstraint(
                condition=models.Q(valid=False) | (models.Q(score__gte=1) & models.Q(score__lte=5)),
                name="a_valid_score_is_1_to_5",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} · {self.metric}: {self.score}"
