from __future__ import annotations

from django.db import models


class CachedResponse(models.Model):
    """A model response in the shared cache (evalhub.llm.cache.PostgresResponseCache reads and
    writes the table directly, from the workers' event loops; Django only makes it and prunes it)."""

    key = models.CharField(max_length=64, primary_key=True)  # sha256 of everything the answer depends on
    completion = models.TextField()
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "llm_response_cache"

    def __str__(self) -> str:
        return self.key
