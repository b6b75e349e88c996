"""Judge versions: each change to a judge (its spec, prompt, criteria variant, privileged sources,
examples) is a new version naming its parent, kept whole so any two can be compared."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evalhub.core.alignment.versions import JudgeDefinition


class Method(models.TextChoices):
    BY_HAND = "by_hand", "by hand"
    FEW_SHOT = "few_shot", "few-shot from disagreements"
    REWRITE = "rewrite", "instructions rewritten"
    SETTINGS = "settings", "settings chosen on train labels"
    REASONS = "reasons", "guidelines distilled from people's reasons"


class JudgeVersion(models.Model):
    name = models.SlugField(max_length=100, help_text="The judge's name; its versions share it.")
    number = models.PositiveIntegerField()
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    definition = models.JSONField(help_text="evalhub.core.alignment.versions.JudgeDefinition, stored once.")
    method = models.CharField(max_length=20, choices=Method.choices, default=Method.BY_HAND)
    # The split whose train labels made this version (an improved judge); held-out labels score it.
    split = models.ForeignKey("catalog.LabelSplit", null=True, blank=True, on_delete=models.PROTECT)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "number"]
        constraints = [
            models.UniqueConstraint(fields=["name", "number"], name="one_judge_version_per_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="judge_version_numbers_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.number}"

    @property
    def judge(self) -> JudgeDefinition:
        return JudgeDefinition.from_json(self.definition)

    @property
    def aligned(self) -> bool:
        """Made from people's train labels: its train figures are optimistic, its held-out ones are not."""
        return self.method != Method.BY_HAND


class VersionRun(models.Model):
    """A judge version run on a debate run's pairs: the debates app's JudgeRun made from its definition,
    named "NAME vN" in the judge lab."""

    version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="runs")
    judge_run = models.OneToOneField("debates.JudgeRun", on_delete=models.CASCADE, related_name="version_run")

    def __str__(self) -> str:
        return f"{self.version} on {self.judge_run.reference}"


class ImprovementRun(models.Model):
    """What every judge improver's run holds: the version it improves, the split whose train labels it
    reads, its job, the version it made (none where nothing beat the current one), who started it and
    when. A method adds its own settings (docs/extending/improvers.md); its job's run is found as
    `job.<model name>` (ImproverRunner's `run_attr`)."""

    version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="%(class)s_runs")
    split = models.ForeignKey("catalog.LabelSplit", on_delete=models.PROTECT, related_name="+")
    job = models.OneToOneField("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="%(class)s")
    made = models.ForeignKey(JudgeVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class SettingsSearch(ImprovementRun):
    """Choice of settings: candidates for a version's criteria variant, privileged sources and samples,
    each asked about the split's train pairs and scored by its agreement with people there; the best
    becomes the next version (a job, `evalhub.alignment.improvers.settings`)."""

    reference = models.ForeignKey("debates.DebateRun", on_delete=models.PROTECT, related_name="+")
    candidates = models.JSONField(help_text="Each candidate's settings: criteria_variant, privileged_sources, samples.")

    def __str__(self) -> str:
        return f"settings for {self.version}"


class CandidateScore(models.Model):
    """One candidate's agreement with people on the train pairs (written once per candidate)."""

    search = models.ForeignKey(SettingsSearch, on_delete=models.CASCADE, related_name="scores")
    candidate = models.PositiveSmallIntegerField()
    agreed = models.PositiveIntegerField()
    judged = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["search", "candidate"], name="one_score_per_candidate")]

    def __str__(self) -> str:
        return f"{self.search}: candidate {self.candidate + 1}, {self.agreed}/{self.judged}"

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.judged if self.judged else None


class InstructionRewrite(ImprovementRun):
    """Instruction rewriting: an LLM (`proposer`) proposes revised instructions from a version's train
    disagreements, each proposal is scored on the train pairs beside the current instructions, and the
    best proposal that beats them becomes the next version (a job, `evalhub.alignment.improvers.rewriting`)."""

    reference = models.ForeignKey("debates.DebateRun", on_delete=models.PROTECT, related_name="+")
    proposer = models.CharField(max_length=300, help_text="Provider spec of the model that proposes instructions.")
    proposals = models.PositiveSmallIntegerField(help_text="The budget: how many proposals are asked for.")
    seed = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"instructions for {self.version}"


class ProposalScore(models.Model):
    """A proposal (0: the current instructions) and its agreement with people on the train pairs."""

    rewrite = models.ForeignKey(InstructionRewrite, on_delete=models.CASCADE, related_name="scores")
    proposal = models.PositiveSmallIntegerField()
    instructions = models.TextField(blank=True)
    agreed = models.PositiveIntegerField()
    judged = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rewrite", "proposal"], name="one_score_per_proposal")]

    def __str__(self) -> str:
        return f"{self.rewrite}: proposal {self.proposal}, {self.agreed}/{self.judged}"

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.judged if self.judged else None


class FewShotRun(ImprovementRun):
    """Few-shot from disagreements as a job: worked examples from a version's train disagreements on a
    split benchmark under one criterion; the next version carries them."""

    criterion = models.SlugField(max_length=100)
    examples = models.PositiveSmallIntegerField(help_text="How many worked examples at most.")
    seed = models.IntegerField(default=0)
    chosen = models.JSONField(null=True, blank=True, help_text="The new definition and its note, once chosen.")

    def __str__(self) -> str:
        return f"examples for {self.version}"


class ReasonsRun(ImprovementRun):
    """Learning from people's reasons (after MLflow's MemAlign): an LLM (`proposer`) distils the reasons
    people wrote on a version's train disagreements into numbered guidelines, and the disagreements they
    explained become worked examples; the candidate is scored on the train pairs beside the version, and
    becomes the next version if it agrees with people more (a job, `evalhub.alignment.improvers.reasons`)."""

    reference = models.ForeignKey("debates.DebateRun", on_delete=models.PROTECT, related_name="+")
    proposer = models.CharField(max_length=300, help_text="Provider spec of the model that distils the reasons.")
    examples = models.PositiveSmallIntegerField(help_text="How many explained disagreements to keep as examples.")
    seed = models.IntegerField(default=0)
    chosen = models.JSONField(null=True, blank=True, help_text="The guidelines, examples and scores, once made.")

    def __str__(self) -> str:
        return f"guidelines for {self.version} from people's reasons"
