from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import BaseCommand

from evalhub.accounts.roles import ADMIN
from evalhub.catalog.demo import do_load_demo
from evalhub.celery import QUEUES
from evalhub.celery import app as celery_app
from evalhub.home.demo import do_start_demo_runs
from evalhub.home.embedded import serve, worker_thread


class Command(BaseCommand):
    help = "First look: migrate, create an admin, load the demo, and serve with a worker in this process."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-demo", action="store_true", help="Do not load the demo benchmark.")
        parser.add_argument("--no-serve", action="store_true", help="Prepare everything, then exit.")

    def handle(self, *args, **options):
        call_command("migrate", interactive=False, verbosity=0)
        username, password = self._ensure_admin()
        if not options["no_demo"]:
            for summary in do_load_demo():
                self.stdout.write(f"Demo benchmark '{summary.benchmark.slug}': {summary.describe()}")
            if not options["no_serve"]:
                started = do_start_demo_runs(settings.DATA_DIR / "tiny-model")
                if started:
                    self.stdout.write(f"Demo runs queued ({', '.join(started)}); watch them on /jobs/.")
        self.stdout.write(f"Log in as '{username}'" + (f" with password: {password}" if password else "."))
        if options["no_serve"]:
            return
        url = f"http://{options['host']}:{options['port']}/"

        def announce() -> None:
            self.stdout.write(self.style.SUCCESS(f"\nevalhub is running at {url}"))
            if settings.CELERY_BROKER_URL.startswith("memory:"):
                self.stdout.write("Embedded mode: SQLite, in-memory channel layer, a Celery worker in this process.")
            self.stdout.write("Press Ctrl-C to stop.\n")
            self.stdout.flush()

        # In embedded mode this worker serves both queues; with REDIS_URL set it joins the real ones.
        with worker_thread(celery_app, QUEUES, concurrency=settings.CELERY_WORKER_CONCURRENCY):
            serve(options["host"], options["port"], on_ready=announce)
        self.stdout.write("Stopped.")

    def _ensure_admin(self) -> tuple[str, str]:
        """Create the admin once and print its password once; EVALHUB_ADMIN_PASSWORD resets it."""
        username = os.environ.get("EVALHUB_ADMIN_USERNAME", "admin")
        given = os.environ.get("EVALHUB_ADMIN_PASSWORD", "")
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        shown = ""
        if user is None:
            password = given or secrets.token_urlsafe(12)
            user = users.objects.create_superuser(username=username, email="", password=password)
            shown = password if not given else "(from EVALHUB_ADMIN_PASSWORD)"
        elif given:
            user.set_password(given)
            user.save(update_fields=["password"])
            shown = "(from EVALHUB_ADMIN_PASSWORD)"
        else:
            self.stdout.write(f"Admin '{username}' exists; use its password (set EVALHUB_ADMIN_PASSWORD to reset it).")
        user.groups.add(Group.objects.get(name=ADMIN))
        return username, shown
