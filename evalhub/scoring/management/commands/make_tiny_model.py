from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.catalog.demo import demo_texts
from evalhub.llm.tiny import ARCHITECTURES, save_tiny_model


class Command(BaseCommand):
    help = (
        "Build a small local model with a chat template at PATH (no download), so every "
        "`transformers:PATH` field (GEM's evaluation LM, judges, candidates) can be tried. "
        "Its weights are random: what it scores shows the workflow, not a real evaluation."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--size", default="tiny", choices=[s for s in ARCHITECTURES if s != "llama-3.1-8b"])
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, path: str, size: str, seed: int, **options):
        try:
            parameters = save_tiny_model(path, demo_texts(), size=size, seed=seed)
        except OSError as error:
            raise CommandError(f"cannot write the model to {path}: {error.strerror or error}") from error
        self.stdout.write(f"Wrote a {size} model ({parameters:,} parameters, random weights) to {path}.")
        self.stdout.write(f"Use it as transformers:{path}")
