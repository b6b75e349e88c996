from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from evalhub.dashboards.arena_battles import arena_records
from evalhub.reads.battles import SOURCES, Filters, load_battles
from evalhub.reads.caching import fingerprint
from evalhub.system.commands import DataCommand


class Command(DataCommand):
    help = (
        "Write every battle in LMArena's battle schema (JSON lines: question_id, model_a, model_b, winner, judge, "
        "turn, conversation_a, conversation_b, plus criterion, benchmark, source): arena-rank reads it, and "
        "import_judgments --format mt-bench reads it back."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", type=Path, required=True, help="The JSONL file to write.")
        parser.add_argument("--benchmark", default="", help="Only this benchmark (slug).")
        parser.add_argument("--criterion", default="", help="Only this criterion (slug).")
        parser.add_argument(
            "--source", action="append", choices=list(SOURCES), help="Only these sources (repeat; default: all)."
        )

    def handle(self, *args, **options) -> None:
        filters = Filters(
            sources=tuple(options["source"] or SOURCES), benchmark=options["benchmark"], criterion=options["criterion"]
        )
        battles = [b for b in load_battles(fingerprint(), filters.with_judges) if filters.keep(b)]
        if not battles:
            raise CommandError("no battle matches; nothing written.")
        options["out"].parent.mkdir(parents=True, exist_ok=True)
        count = 0
        with options["out"].open("w", encoding="utf-8") as out:
            for record in self.counting(arena_records(battles), options["out"].name, total=len(battles)):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
        self.stdout.write(self.style.SUCCESS(f"{count} battle(s) → {options['out']}"))
