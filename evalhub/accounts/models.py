"""Personal API tokens: a pipeline acts as the person who made the token, within the token's scope.

Only a digest of each token is stored (SHA-256 of a 256-bit random secret: a slow password hash buys
nothing against a secret nobody chose); the token itself is shown once, when it is made. `prefix` finds
the row without the secret, and is what pages show.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Scope(models.TextChoices):
    READ = "read", "read: figures, runs and jobs"
    WRITE = "write", "write: also upload, start, pause, resume and cancel"
    ADMIN = "admin", "admin: also what only admins may do"


# What each scope allows, cumulatively: a write token reads too.
SCOPE_RANK = {Scope.READ: 0, Scope.WRITE: 1, Scope.ADMIN: 2}


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What it is for, e.g. 'CI pipeline'.")
    prefix = models.CharField(max_length=16, unique=True, help_text="The token's public start: finds it.")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the token's secret part, hex.")
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.READ)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="None: never.")
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(scope__in=["read", "write", "admin"]), name="api_token_scope_known")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.scope})"

    def allows(self, scope: str) -> bool:
        return SCOPE_RANK[Scope(self.scope)] >= SCOPE_RANK[Scope(scope)]
