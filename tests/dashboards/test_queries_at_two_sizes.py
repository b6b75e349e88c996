"""No page's cost grows with judges × data (DESIGN convention 19, issue 79): every page type makes as
many queries with 4 judges, 3 models and 12 prompts as with 2 judges, 2 models and 6, cold (nothing
cached, no worker running yet) and warm. The model page and the win-rate page read each judge's
comparisons once per page, whatever the number of judges, and never compute another judge's board."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.judgelab.report import judge_key

pytestmark = pytest.mark.django_db

BASELINE = "base_model"
PEOPLE = "human_panel"


def judged(judges: int, models: int, prompts: int) -> None:
    """AlpacaEval-shaped files: every judge compares every model with the baseline on every prompt, and
    people label the first half of each model's pairs."""
    rng = np.random.default_rng(judges * 100 + prompts)
    records = []
    for model in range(models):
        for prompt in range(prompts):
            pair = {
                "instruction": f"Instruction {prompt}",
                "output_1": "b" * (40 + 3 * prompt),
                "output_2": "m" * (30 + 11 * ((prompt * 7 + model) % 13)),
                "generator_1": BASELINE,
                "generator_2": f"model_{model}",
            }
            for judge in range(judges):
                records.append({**pair, "annotator": f"judge_{judge}", "preference": float(rng.uniform(1, 2))})
            if prompt < prompts // 2:
                records.append({**pair, "annotator": PEOPLE, "preference": float(rng.choice([1.0, 2.0]))})
    do_import_judgments(
        filename="judged.json", data=json.dumps(records).encode(), benchmark_slug="ae", allow_new_models=True
    )


def pages() -> list[str]:
    from evalhub.alignment.actions import do_create_judge
    from evalhub.alignment.models import JudgeVersion
    from evalhub.catalog.models import LanguageModel, Prompt
    from evalhub.core.alignment.versions import JudgeDefinition

    if not JudgeVersion.objects.exists():
        do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))

    prompt = Prompt.objects.filter(benchmark__slug="ae").order_by("id").first()
    model, baseline = (LanguageModel.objects.get(display_name=name).slug for name in ("model_0", BASELINE))
    win_rates = f"?judge=judge_0&baseline={BASELINE}"
    return [
        "/",
        "/benchmarks/ae/",
        f"/benchmarks/ae/prompts/{prompt.pk}/",
        "/leaderboards/",
        f"/leaderboards/baseline/{win_rates}",
        f"/leaderboards/baseline/{win_rates}&estimator=multi-judge",
        f"/leaderboards/baseline.csv{win_rates}",
        f"/models/{model}/",
        f"/models/{baseline}/",
        "/judges/",
        f"/judges/{judge_key('judge_0')}/",
        "/judges/corrected-boards/",
        "/judges/pointwise/",
        "/judges/graded/",
        "/judges/report.csv",
        "/judge-versions/",
        "/judge-versions/detail/",
        "/judge-versions/detail.json",
    ]


@pytest.fixture
def no_worker_yet(monkeypatch):
    """Asking a worker records the ask: what a page does while no worker has answered it yet."""
    from evalhub.dashboards import pairwise, win_rate_boards
    from evalhub.judgelab import report

    asked: list = []

    class Task:
        def apply_async(self, args=None, kwargs=None, **options):
            asked.append((args, kwargs))

    monkeypatch.setattr(win_rate_boards, "task_named", lambda name: Task())
    monkeypatch.setattr(report, "task_named", lambda name: Task())
    monkeypatch.setattr(pairwise, "task_named", lambda name: Task())
    return asked


def counted(client, urls: list[str]) -> dict[str, tuple[int, int]]:
    """url → (queries of its first view with nothing cached or kept, of a second view)."""
    from evalhub.judgelab.models import ReportSnapshot

    out = {}
    for url in urls:
        cache.clear()
        ReportSnapshot.objects.all().delete()  # the judge lab's kept reports: nothing kept, at either size
        seen = []
        for _ in range(2):
            with CaptureQueriesContext(connection) as captured:
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                if hasattr(response, "streaming_content"):
                    b"".join(response.streaming_content)
            seen.append(len(captured))
        out[url] = (seen[0], seen[1])
    return out


def test_every_page_makes_as_many_queries_with_twice_the_judges_models_and_prompts(
    client, viewer, login, no_worker_yet
):
    client = login(viewer)
    judged(judges=2, models=2, prompts=6)
    small = counted(client, pages())
    judged(judges=4, models=3, prompts=12)  # two more judges, a model and six prompts more
    large = counted(client, pages())
    grew = {url: (small[url], large[url]) for url in small if small[url] != large[url]}
    assert not grew, f"(cold, warm) queries at the small size, then at the large: {grew}"


def tasks_asked(monkeypatch) -> list[str]:
    """The names of the tasks the win-rate boards ask workers for (none run)."""
    from evalhub.dashboards import win_rate_boards

    asked: list[str] = []

    class Task:
        def __init__(self, name: str) -> None:
            self.name = name

        def apply_async(self, args=None, **options):
            asked.append(self.name)

    monkeypatch.setattr(win_rate_boards, "task_named", Task)
    return asked


def test_the_judged_choices_are_kept_and_a_worker_makes_the_next_list_while_the_last_one_serves(
    client, viewer, login, monkeypatch, django_capture_on_commit_callbacks
):
    from evalhub.dashboards import win_rate_boards

    asked = tasks_asked(monkeypatch)
    client = login(viewer)
    judged(judges=1, models=1, prompts=4)

    def judges_listed() -> set[str]:
        response = client.get(f"/leaderboards/baseline/?baseline={BASELINE}")
        assert response.status_code == 200
        return {choice["judge"] for choice in response.context["choices"]}

    assert judges_listed() == {"judge_0", PEOPLE} and not asked, "the first list is made in the request"
    with django_capture_on_commit_callbacks(execute=True):
        judged(judges=2, models=1, prompts=4)  # a second judge's verdicts land
    assert judges_listed() == {"judge_0", PEOPLE}, "the last list serves while a worker makes the next"
    judges_listed()
    assert asked.count(win_rate_boards.CHOICES_TASK) == 1, "one worker asked, however many pages ask"
    win_rate_boards.refresh_choices()  # the worker's part
    assert judges_listed() == {"judge_0", "judge_1", PEOPLE}


def test_at_scale_the_first_list_of_judged_choices_is_a_workers_and_every_door_says_so(
    client, viewer, login, monkeypatch
):
    """Its two grouped reads of every judgment took a first win-rate page 36 s at ten million (SQLite)."""
    from evalhub.accounts.actions import do_create_token
    from evalhub.dashboards import win_rate_boards
    from tests.conftest import make_user

    asked, read = tasks_asked(monkeypatch), []
    real_choices = win_rate_boards.choices
    monkeypatch.setattr(win_rate_boards, "choices", lambda: read.append(1) or real_choices())
    monkeypatch.setattr(win_rate_boards, "CHOICES_IN_WORKER_AT", 6)  # the six judgments: as if ten million
    judged(judges=1, models=1, prompts=4)
    cache.clear()
    client = login(viewer)
    page = client.get(f"/leaderboards/baseline/?baseline={BASELINE}")
    assert page.status_code == 200 and 'id="choices-pending"' in page.content.decode() and not read
    assert client.get(f"/leaderboards/baseline.csv?baseline={BASELINE}").status_code == 503
    assert 'id="win-rates-pending"' in client.get("/models/model_0/").content.decode()
    token = do_create_token(make_user("reader", "viewer"), "CI", "read", 30)[1]
    api = client.get(
        "/api/v1/win-rates",
        {"benchmark": "ae", "judge": "judge_0", "baseline": BASELINE},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert api.status_code == 503
    assert asked == [win_rate_boards.CHOICES_TASK] and not read, "one worker asked; nothing read in a request"
    win_rate_boards.refresh_choices()  # the worker's part
    page = client.get(f"/leaderboards/baseline/?baseline={BASELINE}")
    assert {choice["judge"] for choice in page.context["choices"]} == {"judge_0", PEOPLE}
    assert 'id="choices-pending"' not in page.content.decode()


def test_at_scale_with_no_broker_the_first_list_of_choices_is_said_not_asked(client, viewer, login, monkeypatch):
    from evalhub.dashboards import win_rate_boards

    class Down:
        def __init__(self, name: str) -> None:
            pass

        def apply_async(self, args=None, **options):
            raise ConnectionError("broker down")

    monkeypatch.setattr(win_rate_boards, "task_named", Down)
    monkeypatch.setattr(win_rate_boards, "CHOICES_IN_WORKER_AT", 6)  # the six judgments: as if ten million
    judged(judges=1, models=1, prompts=4)
    cache.clear()
    client = login(viewer)
    page = client.get(f"/leaderboards/baseline/?baseline={BASELINE}").content.decode()
    assert 'id="choices-pending"' in page and "No worker could be asked" in page
    waiting = client.get(f"/leaderboards/baseline.csv?baseline={BASELINE}")
    assert waiting.status_code == 503 and "No worker could be asked" in waiting.content.decode()
    model_page = client.get("/models/model_0/").content.decode()
    assert "no worker could be asked: the broker did not answer" in model_page
