"""The catalog: who is evaluated, on what, and what was said about it.

Natural keys are database constraints, so a re-import or a retried task can never
duplicate a row, whatever the code above does.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from evalhub.core.alignment.split import HELD_OUT, TRAIN
from evalhub.core.prompts.criteria import check_levels
from evalhub.system.slugs import slug_constraint


class LanguageModel(models.Model):
    """A system under evaluation, a judge or debate agent, or a human author."""

    slug = models.SlugField(max_length=100, unique=True)
    display_name = models.CharField(max_length=200)
    is_human = models.BooleanField(default=False, help_text="A person (or a group of people), not a model.")
    provider = models.CharField(max_length=50, blank=True, help_text="openai, anthropic, transformers, …")
    model_id = models.CharField(max_length=300, blank=True, help_text="The provider's model name or a local path.")
    family = models.CharField(max_length=100, blank=True)
    parameter_count = models.PositiveBigIntegerField(null=True, blank=True)
    parameter_count_estimated = models.BooleanField(default=False)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["display_name"]
        constraints = [
            slug_constraint("languagemodel"),
            models.CheckConstraint(
                condition=Q(is_human=False) | Q(provider="", model_id=""),
                name="human_author_has_no_provider",
            ),
        ]

    def __str__(self) -> str:
        return self.display_name


class TaskType(models.TextChoices):
    PEER_REVIEW = "peer_review", "Peer review"
    SUMMARIZATION = "summarization", "Summarization"
    STORY_COMPLETION = "story_completion", "Story completion"
    QUESTION_ANSWERING = "question_answering", "Question answering"
    TRANSLATION = "translation", "Translation"
    SCIENCE_QA = "science_qa", "Science QA"
    OPEN_CHAT = "open_chat", "Open-ended chat"
    OTHER = "other", "Other"


class Benchmark(models.Model):
    """A dataset of prompts for one task type."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    task_type = models.CharField(max_length=40, choices=TaskType.choices, default=TaskType.OTHER)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [slug_constraint("benchmark")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("benchmark_detail", args=[self.slug])


class Prompt(models.Model):
    """A task input. The privileged fields are shown to judges, never to candidates."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="prompts")
    external_id = models.CharField(max_length=200, help_text="The id in the imported file (prompt_id).")
    text = models.TextField()
    category = models.CharField(max_length=100, blank=True, help_text="Scenario or category, e.g. 'math'.")
    synopsis = models.TextField(blank=True, help_text="A short synopsis, e.g. a paper's abstract (GEM-S).")
    source = models.TextField(blank=True, help_text="The full source, e.g. the paper text.")
    reference_answer = models.TextField(blank=True)
    rating_guidelines = models.TextField(blank=True)
    privileged = models.JSONField(default=dict, blank=True, help_text="Other named privileged fields.")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "external_id"], name="unique_prompt_per_benchmark"),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark.slug}/{self.external_id}"

    def privileged_information(self) -> dict[str, str]:
        """Every non-empty privileged source by name, in a stable order."""
        named = {"reference_answer": self.reference_answer, "rating_guidelines": self.rating_guidelines}
        named.update(sorted(self.privileged.items()))
        return {name: text for name, text in named.items() if text}


class LabelSplit(models.Model):
    """A benchmark's prompts split once into train and held-out (evalhub.core.alignment.split): whatever
    builds or tunes a judge reads people's labels on train prompts only, and a tuned judge is scored on
    the held-out ones. Kept, never redrawn: prompts added later are placed without moving any."""

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, related_name="label_split")
    held_out_fraction = models.FloatField(help_text="The share of each category's prompts held out.")
    seed = models.IntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(held_out_fraction__gt=0) & Q(held_out_fraction__lt=1), name="held_out_fraction_0_to_1"
            )
        ]

    def __str__(self) -> str:
        return f"{self.benchmark.slug}: {self.held_out_fraction:.0%} held out (seed {self.seed})"


class PromptPart(models.Model):
    """Which side of its benchmark's split a prompt is on."""

    PARTS = [(TRAIN, "train"), (HELD_OUT, "held-out")]
    split = models.ForeignKey(LabelSplit, on_delete=models.CASCADE, related_name="parts")
    prompt = models.OneToOneField(Prompt, on_delete=models.CASCADE, related_name="split_part")
    part = models.CharField(max_length=10, choices=PARTS)
    placed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["split", "part"], name="prompt_part_by_split")]
        constraints = [models.CheckConstraint(condition=Q(part__in=[TRAIN, HELD_OUT]), name="prompt_part_known")]

    def __str__(self) -> str:
        return f"{self.prompt}: {self.part}"


class PerturbationLevel(models.TextChoices):
    CHARACTER = "C", "Character"
    WORD = "W", "Word"
    SENTENCE = "S", "Sentence"


class Response(models.Model):
    """A text written for a prompt, by a model or a person, or derived from another response."""

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="responses")
    model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="responses")
    variant = models.CharField(
        max_length=100, blank=True, help_text="Tells apart several responses of one model to one prompt."
    )
    text = models.TextField()
    # Indexed only where set (Meta.indexes): an index of every original's NULL made SQLite, with no
    # statistics, read a benchmark's responses by `parent IS NULL` (all of them) for each slice of prompt
    # ids asked about, a re-import of a million rows quadratic.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="derived", db_index=False
    )
    perturbation = models.CharField(max_length=100, blank=True)
    perturbation_level = models.CharField(max_length=1, choices=PerturbationLevel.choices, blank=True)
    perturbation_severity = models.CharField(max_length=20, blank=True)
    perturbation_seed = models.BigIntegerField(default=0)
    perturbation_params = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prompt_id", "model_id", "variant", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["prompt", "model", "variant"],
                condition=Q(parent__isnull=True),
                name="unique_original_response",
            ),
            models.UniqueConstraint(
                fields=["parent", "perturbation", "perturbation_severity", "perturbation_seed"],
                condition=Q(parent__isnull=False),
                name="unique_derived_response",
            ),
            # An original has no perturbation record; a derived response always has one.
            models.CheckConstraint(
                condition=(Q(parent__isnull=True) & Q(perturbation="") & Q(perturbation_level=""))
                | (Q(parent__isnull=False) & ~Q(perturbation="")),
                name="derived_response_records_its_perturbation",
            ),
            models.CheckConstraint(
                condition=Q(perturbation_level__in=["", "C", "W", "S"]), name="perturbation_level_is_c_w_or_s"
            ),
        ]
        indexes = [
            models.Index(fields=["model", "prompt"]),
            models.Index(fields=["parent"], condition=Q(parent__isnull=False), name="response_parent_where_set"),
        ]

    def __str__(self) -> str:
        return f"{self.model.slug} on {self.prompt_id}" + (f" ({self.perturbation})" if self.perturbation else "")


def select_prompts(benchmark: Benchmark, external_ids: str = "", category: str = "") -> list[int]:
    """The ids of a benchmark's prompts named by their external ids (comma or space separated) and/or
    of one category; [] when neither is given (= all). ValueError naming unknown ids or an empty choice."""
    wanted = [part for part in external_ids.replace(",", " ").split() if part]
    if not wanted and not category:
        return []
    prompts = benchmark.prompts.order_by("pk")
    if wanted:
        found = dict(prompts.filter(external_id__in_texts=wanted).values_list("external_id", "pk"))
        unknown = [w for w in wanted if w not in found]
        if unknown:
            raise ValueError(f"{benchmark.name} has no prompt {', '.join(unknown[:10])}.")
        prompts = prompts.filter(pk__in_integers=list(found.values()))
    if category:
        prompts = prompts.filter(category=category)
    ids = list(prompts.values_list("pk", flat=True))
    if not ids:
        raise ValueError(f"No prompt of {benchmark.name} is in the category {category!r}.")
    return ids


IMPORTED_VARIANT = "imported"  # names the responses imported without a variant, in filters


def stored_variant(chosen: str) -> str:
    """The `Response.variant` a chosen name stands for: "imported" is the blank variant; a generation
    run's variant (`answer:1h`, one hint tier) is itself."""
    return "" if chosen == IMPORTED_VARIANT else chosen


def variant_q(chosen: str) -> Q:
    """Which responses a run takes by variant: blank `chosen` = every one."""
    return Q(variant=stored_variant(chosen)) if chosen else Q()


def check_variant(benchmark: Benchmark, models, chosen: str) -> str | None:
    """Why `chosen` selects no response of these models in this benchmark (naming those there are), or None."""
    if not chosen:
        return None
    present = set(
        Response.objects.filter(prompt__benchmark=benchmark, model__in=models, parent__isnull=True)
        .values_list("variant", flat=True)
        .distinct()
    )
    if stored_variant(chosen) in present:
        return None
    names = ", ".join(sorted(v or IMPORTED_VARIANT for v in present)) or "none"
    return f"No response of these models has the variant {chosen!r}; there are: {names}."


def variant_matches(chosen: str, variant: str) -> bool:
    """`variant_q` for a response already loaded."""
    return not chosen or variant == stored_variant(chosen)


class Criterion(models.Model):
    """What a judgment is about, with a Likert description for every level."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    definition = models.TextField(blank=True)
    levels = models.JSONField(help_text='{"1": "…", "2": "…", …}: a description for each score, from 1 up.')
    scenario = models.CharField(max_length=100, blank=True)
    builtin = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "criteria"
        constraints = [slug_constraint("criterion")]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        try:
            self.levels = {str(score): text for score, text in check_levels(self.levels).items()}
        except ValueError as error:
            raise ValidationError({"levels": str(error)}) from None


class Verdict(models.IntegerChoices):
    """ScaleEval's pairwise verdicts, relative to the order the pair was shown in."""

    NEITHER = 0, "Neither is better"
    FIRST = 1, "Submission 1 is better"
    SECOND = 2, "Submission 2 is better"


class Judgment(models.Model):
    """One verdict or score by one judge (a model or a person) under one criterion.

    A single-response judgment has `score`; a pairwise one has `response_2` and a
    `verdict`, with `response` and `response_2` in the order the judge saw them.
    """

    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="judgments")
    judge_model = models.ForeignKey(
        LanguageModel, null=True, blank=True, on_delete=models.PROTECT, related_name="judgments_given"
    )
    judge_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="judgments_given",
        db_index=False,  # indexed where set only (Meta): a model's verdicts, nearly all rows, add no entry
    )
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="judgments")
    # Indexed where set only (Meta), as Response.parent: SQLite, planning without statistics, read every
    # score (response_2 NULL) through the plain index for each slice of responses a score re-import asked about.
    response_2 = models.ForeignKey(
        Response,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judgments_as_second",
        db_index=False,
    )
    score = models.FloatField(null=True, blank=True)
    verdict = models.SmallIntegerField(null=True, blank=True, choices=Verdict.choices)
    probability = models.FloatField(
        null=True, blank=True, help_text="Pairwise: the judge's probability that the first response is better."
    )
    grade = models.FloatField(
        null=True,
        blank=True,
        help_text="Pairwise, graded: how much better the first response is, -3 (second much better) to 3.",
    )
    # A person's labels from a blind-first study: the verdict before they saw an aid (`verdict` is the
    # one after), and the aid. The judge lab reads the blind one by default, as for adjudications.
    blind_verdict = models.SmallIntegerField(
        null=True,
        blank=True,
        choices=Verdict.choices,
        help_text="A person's verdict before any aid, in the order shown.",
    )
    aid = models.CharField(
        max_length=20, blank=True, help_text="What the person saw before `verdict`: debate, critique, none."
    )
    rationale = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    prompt_variant = models.CharField(max_length=50, default="original")
    privileged_sources = models.JSONField(
        default=list, blank=True, help_text="Names of the privileged fields the judge saw; empty if none."
    )
    source = models.CharField(max_length=50, default="import", help_text="debate, single_judge, dhp, human, …")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # A person's judgments found by person: an entry for each of the rows a person judged
            # only, where the plain index took one for every imported or judge-run verdict too (a
            # ninth of the server's work storing a million imported judgments).
            models.Index(fields=["judge_user"], condition=Q(judge_user__isnull=False), name="judgment_by_a_person"),
            models.Index(
                fields=["response_2"], condition=Q(response_2__isnull=False), name="judgment_response_2_where_set"
            ),
            # Scores of single responses, and graded verdicts, by response: a few rows beside millions of
            # pairwise ones, which the plain index on `response` made the planner read the table for (a
            # prompt's page at ten million judgments: 3.4 s; the graded page, with no grade at all: 1.0 s).
            models.Index(fields=["response"], condition=Q(response_2__isnull=True), name="judgment_score_by_response"),
            models.Index(fields=["response"], condition=Q(grade__isnull=False), name="judgment_graded_by_response"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(judge_model__isnull=False) & Q(judge_user__isnull=True))
                | (Q(judge_model__isnull=True) & Q(judge_user__isnull=False)),
                name="judgment_has_exactly_one_judge",
            ),
            models.CheckConstraint(
                condition=(Q(response_2__isnull=True) & Q(score__isnull=False) & Q(verdict__isnull=True))
                # A pairwise verdict may be missing: the judge answered and no verdict could be read.
                | (
                    Q(response_2__isnull=False)
                    & (Q(verdict__in=[0, 1, 2]) | Q(verdict__isnull=True))
                    & Q(score__isnull=True)
                ),
                name="judgment_is_a_score_or_a_pairwise_verdict",
            ),
            models.CheckConstraint(condition=~Q(response=F("response_2")), name="pair_has_two_responses"),
            models.CheckConstraint(
                condition=Q(probability__isnull=True) | Q(probability__gte=0, probability__lte=1),
                name="judgment_probability_0_to_1",
            ),
            # A graded preference (the privileged-information paper, Appendix A.1) is a pairwise
            # verdict with a size: its sign is the verdict.
            models.CheckConstraint(
                condition=Q(grade__isnull=True)
                | (Q(grade__gt=0, grade__lte=3, verdict=1))
                | (Q(grade__lt=0, grade__gte=-3, verdict=2))
                | (Q(grade=0, verdict=0)),
                name="judgment_grade_is_a_sized_verdict",
            ),
            # An imported label is found again by this key: the same file imported twice changes nothing.
            models.UniqueConstraint(
                fields=["criterion", "judge_model", "response", "response_2", "prompt_variant"],
                condition=Q(judge_model__isnull=False, response_2__isnull=False),
                name="one_pairwise_judgment_per_model_judge",
            ),
            # An imported score by its key (criterion, rater, response): the same file twice changes nothing,
            # and two imports of it at once store it once (the second is refused: import_transaction).
            models.UniqueConstraint(
                fields=["criterion", "judge_model", "response", "prompt_variant"],
                condition=Q(judge_model__isnull=False, response_2__isnull=True),
                name="one_score_per_model_judge_and_response",
            ),
            # A person's score of a response in the browser: a second click changes it, never adds one.
            models.UniqueConstraint(
                fields=["criterion", "judge_user", "response"],
                condition=Q(judge_user__isnull=False, response_2__isnull=True),
                name="one_score_per_person_and_response",
            ),
        ]

    def __str__(self) -> str:
        outcome = f"score {self.score:g}" if self.response_2_id is None else f"verdict {self.verdict}"
        return f"{self.criterion} judgment #{self.pk}: {outcome}"


class DataImport(models.Model):
    """A record of every import: what came in, from where, by whom, and what it changed."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="imports")
    filename = models.CharField(max_length=300)
    sha256 = models.CharField(max_length=64)
    rows = models.PositiveIntegerField()
    counts = models.JSONField(default=dict)
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.filename} → {self.benchmark.slug}"
