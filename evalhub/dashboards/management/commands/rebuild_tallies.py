from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from evalhub.dashboards.counts import do_rebuild_tallies
from evalhub.tallies.models import BattleCount, JudgeTally


class Command(BaseCommand):
    help = (
        "Count every battle and every judge's tallies again from the debates, verdicts and imported "
        "labels. The counts are kept as verdicts are written; this is for after a restore, or to check."
    )

    def handle(self, *args, **options) -> None:
        start = time.perf_counter()
        do_rebuild_tallies()
        self.stdout.write(
            f"Counted {BattleCount.objects.count():,} kinds of battle and {JudgeTally.objects.count():,} judge "
            f"tallies in {time.perf_counter() - start:.1f} s."
        )
