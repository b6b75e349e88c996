"""The human queue: debates the agents could not settle.

Guarantees live in the database: one reservation per person and one verdict per (item,
person) (unique constraints), and reservations are made while holding the item's row lock, so two
people can never hold the same slot and nobody gets an item twice.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class ItemStatus(models.TextChoices):
    OPEN = "open", "Waiting for people"
    NEEDS_ADMIN = "needs_admin", "Waiting for an admin"
    RESOLVED = "resolved", "Resolved"


class FinalSource(models.TextChoices):
    HUMAN_UNANIMOUS = "human_unanimous", "People, unanimous"
    HUMAN_MAJORITY = "human_majority", "People, majority"
    ADMIN_OVERRIDE = "admin_override", "Admin override"


class AdjudicationItem(models.Model):
    debate = models.OneToOneField("debates.Debate", on_delete=models.CASCADE, related_name="adjudication_item")
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.OPEN)
    required_verdicts = models.PositiveSmallIntegerField(default=1)
    final_verdict = models.SmallIntegerField(null=True, blank=True, help_text="In the order the agents saw.")
    final_source = models.CharField(max_length=20, choices=FinalSource.choices, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"Adjudication of debate {self.debate_id} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("adjudication_screen", args=[self.pk])


class Reservation(models.Model):
    """An item held for one person for a while; `swapped` is the blind order that person sees."""

    item = models.ForeignKey(AdjudicationItem, on_delete=models.CASCADE, related_name="reservations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reservations")
    swapped = models.BooleanField(help_text="Shown in the reverse of the agents' order.")
    aid = models.CharField(max_length=20, blank=True, help_text="Blind first: the aid shown after the blind verdict.")
    started_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        # One held item per person, whatever the run: two requests for "the next item" at the same
        # moment (a double click, two tabs) once each locked a different item and both kept it.
        constraints = [models.UniqueConstraint(fields=["user"], name="one_reservation_per_person")]

    def __str__(self) -> str:
        return f"{self.user} holds item {self.item_id}"


class BlindVerdict(models.Model):
    """A person's verdict before they saw any aid (blind-first runs), in the agents' order. Stored once,
    never edited: the verdict after the reveal is the Adjudication that points here."""

    item = models.ForeignKey(AdjudicationItem, on_delete=models.CASCADE, related_name="blind_verdicts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="blind_verdicts")
    verdict = models.SmallIntegerField(choices=[(0, "Neither"), (1, "Submission 1"), (2, "Submission 2")])
    swapped = models.BooleanField(help_text="The person saw the pair in the reverse of the agents' order.")
    aid = models.CharField(max_length=20, help_text="The aid this item was assigned for this person.")
    seconds_spent = models.FloatField(help_text="From the reservation to the blind verdict.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "user"], name="one_blind_verdict_per_item_and_person"),
            models.CheckConstraint(condition=models.Q(verdict__in=[0, 1, 2]), name="blind_verdict_0_1_2"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: blind {self.verdict} on item {self.item_id}"


class Adjudication(models.Model):
    """One person's verdict, stored in the agents' order whatever order the person saw."""

    item = models.ForeignKey(AdjudicationItem, on_delete=models.CASCADE, related_name="adjudications")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications")
    verdict = models.SmallIntegerField(choices=[(0, "Neither"), (1, "Submission 1"), (2, "Submission 2")])
    swapped = models.BooleanField(help_text="The person saw the pair in the reverse of the agents' order.")
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    notes = models.TextField(blank=True)
    seconds_spent = models.FloatField()
    flagged_fast = models.BooleanField(default=False)
    # Blind-first runs: the verdict before the reveal (this row's verdict is the one after it).
    blind = models.OneToOneField(BlindVerdict, null=True, blank=True, on_delete=models.PROTECT, related_name="revealed")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "user"], name="one_verdict_per_item_and_person"),
            models.CheckConstraint(condition=models.Q(verdict__in=[0, 1, 2]), name="adjudication_verdict_0_1_2"),
            models.CheckConstraint(
                condition=models.Q(confidence__isnull=True) | models.Q(confidence__in=[1, 2, 3]),
                name="adjudication_confidence_1_to_3",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.verdict} on item {self.item_id}"

    @property
    def changed_after_reveal(self) -> bool | None:
        return None if self.blind is None else self.blind.verdict != self.verdict


class AdjudicationEvent(models.Model):
    """The audit trail: every reservation, verdict, skip, expiry and override, never edited."""

    item = models.ForeignKey(AdjudicationItem, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=30)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} on item {self.item_id}"
