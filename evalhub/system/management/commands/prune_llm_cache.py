from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from evalhub.system.models import CachedResponse


class Command(BaseCommand):
    help = (
        "Remove cached model responses from the shared cache (PostgreSQL): those older than --days, "
        "and beyond the --keep newest. A removed response is simply asked again when next needed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None, help="Remove responses cached more than this long ago.")
        parser.add_argument("--keep", type=int, default=None, help="Keep at most this many, the newest.")

    def handle(self, *args, **options) -> None:
        days, keep = options["days"], options["keep"]
        if days is None and keep is None:
            raise CommandError("Say what to remove: --days N, --keep N, or both.")
        if (days is not None and days < 0) or (keep is not None and keep < 0):
            raise CommandError("--days and --keep take a number of 0 or more.")
        removed = 0
        if days is not None:
            removed += CachedResponse.objects.filter(created_at__lt=timezone.now() - timedelta(days=days)).delete()[0]
        if keep == 0:
            removed += CachedResponse.objects.all().delete()[0]
        elif keep is not None:
            # The keep-th newest time: everything older goes (rows cached in the same instant stay).
            newest = CachedResponse.objects.order_by("-created_at").values_list("created_at", flat=True)
            boundary = newest[keep - 1 : keep].first()
            if boundary is not None:
                removed += CachedResponse.objects.filter(created_at__lt=boundary).delete()[0]
        self.stdout.write(f"Removed {removed:,} cached responses; {CachedResponse.objects.count():,} remain.")
