from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.llm import get_scorer
from evalhub.llm.registry import parse_spec
from evalhub.llm.scoring.order_invariance import TOLERANCE, order_invariance, sample_requests
from evalhub.llm.types import LLMError, UnknownProvider


class Command(BaseCommand):
    help = (
        "Check that a log-probability server (vLLM's OpenAI-compatible echo mode) gives each request the same "
        "log-probability in any order and batch, before GEM runs on it; exits 1 when it does not."
    )

    def add_arguments(self, parser):
        parser.add_argument("spec", help="openai-compatible:http://host:8000/v1|model (or any scorer spec)")
        parser.add_argument("--tokenizer", default="", help="A local tokenizer folder (default: the model's name)")
        parser.add_argument("--requests", type=int, default=12)
        parser.add_argument("--tolerance", type=float, default=TOLERANCE, help="nats on a request's sum")

    def handle(self, *args, **options):
        try:
            parse_spec(options["spec"])
            extra = {"tokenizer": options["tokenizer"]} if options["tokenizer"] else {}
            scorer = get_scorer(options["spec"], **extra)
            report = order_invariance(scorer, sample_requests(options["requests"]), options["tolerance"])
        except (UnknownProvider, LLMError) as error:
            raise CommandError(str(error)) from None
        if not report.ok:
            raise CommandError(report.describe())
        self.stdout.write(self.style.SUCCESS(report.describe()))
