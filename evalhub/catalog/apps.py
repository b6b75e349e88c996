from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_delete


def ensure_builtin_criteria(sender, **kwargs) -> None:
    # After every migrate and every flush (tests flush between transactional tests; `flush` in
    # production): a labels file naming `helpfulness` imports on any database, as after migrate alone.
    from evalhub.catalog.actions.responses import do_ensure_builtin_criteria

    do_ensure_builtin_criteria()


class CatalogConfig(AppConfig):
    name = "evalhub.catalog"
    label = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        """What the boards' counts need to hear of (evalhub.tallies.signals): the counts name models,
        criteria and benchmarks by slug and scenarios by a prompt's category."""
        from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response
        from evalhub.tallies.signals import watch_changes, watch_deletions

        watch_deletions(Judgment, Response, Prompt, Benchmark, LanguageModel, Criterion)
        watch_changes(LanguageModel, ("slug", "is_human"))
        watch_changes(Benchmark, ("slug",))
        watch_changes(Criterion, ("slug",))
        watch_changes(Prompt, ("category", "benchmark_id"))
        watch_changes(Response, ("model_id", "prompt_id"))
        post_migrate.connect(ensure_builtin_criteria, sender=self, dispatch_uid="catalog-builtin-criteria")
        from evalhub.catalog.queries import catalog_deleted

        for model in (Prompt, Response):  # what the benchmarks' kept counts count (catalog.queries)
            pre_delete.connect(
                catalog_deleted, sender=model, weak=False, dispatch_uid=f"catalog-deleted-{model.__name__}"
            )
