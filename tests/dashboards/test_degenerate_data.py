"""Degenerate data gets an answer, never a 500: small benchmarks where lengths do not vary, one prompt,
one model wins everything, or every verdict is a tie, imported as people's and a judge's labels; then
every page and export reachable from the home page by its links, opened as an admin."""

from __future__ import annotations

import re
from collections import deque
from urllib.parse import urljoin, urlsplit

import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from tests.conftest import make_user

pytestmark = pytest.mark.django_db
HEADER = "prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,judge_kind,winner,probability_a"
MODELS = ("m1", "m2", "m3")
LINK = re.compile(r'href="([^"#]+)"')
NOT_VISITED = ("/logout", "/admin/", "/static/", "/ws/", "/accounts/", "/surveys/")
SHAPES = ("constant lengths", "nearly constant lengths", "one prompt", "one model wins", "ties only")
MOST_PAGES = 120
PER_SHAPE = 2


def length(shape: str, prompt: int, model: str) -> int:
    """A response's length in units of its model's name."""
    if shape == "constant lengths":
        return 30
    if shape == "nearly constant lengths":  # one answer a unit longer: tanh(Δ / SD) is ±1 on all the others
        return 20 + 5 * int(model[1]) + (prompt == 0 and model != "m1")
    return 30 + 7 * prompt + 3 * int(model[1])


def labels_file(shape: str) -> bytes:
    """Three models on every pair of them, a model judge (with probabilities) and two people."""
    prompts = 1 if shape == "one prompt" else 12
    lines = [HEADER]
    for i in range(prompts):
        for a, b in (("m1", "m2"), ("m1", "m3"), ("m2", "m3")):
            texts = {m: m * length(shape, i, m) for m in (a, b)}
            for judge, kind in (("judge-x", "model"), ("pat", "human"), ("sam", "human")):
                winner = {
                    "constant lengths": "ab"[(i + int(a[1])) % 2],
                    "nearly constant lengths": "aabt"[(i * 7 + int(a[1]) * 3 + len(judge)) % 4].replace("t", "tie"),
                    "one prompt": "a",
                    "one model wins": "a" if a == "m1" else "b" if b == "m1" else "tie",
                    "ties only": "tie",
                }[shape]
                p = {"a": "0.9", "b": "0.1", "tie": "0.5"}[winner] if kind == "model" else ""
                lines.append(f"q{i},Q{i}?,c{i % 2},{a},{b},{texts[a]},{texts[b]},{judge},{kind},{winner},{p}")
    return "\n".join(lines).encode()


def crawl(client, start: str, seen: dict[str, int]) -> None:
    """Every same-site link from `start`, breadth first, into `seen` (url → status): at most PER_SHAPE
    urls of one shape (their numbers aside: the twelve prompts' pages are one page), MOST_PAGES more."""
    shapes: dict[str, int] = {}
    for url in seen:
        shapes[re.sub(r"\d+", "N", url)] = shapes.get(re.sub(r"\d+", "N", url), 0) + 1
    queue, budget = deque([start]), len(seen) + MOST_PAGES
    while queue and len(seen) < budget:
        url = queue.popleft()
        shape = re.sub(r"\d+", "N", url)
        if url in seen or shapes.get(shape, 0) >= PER_SHAPE:
            continue
        shapes[shape] = shapes.get(shape, 0) + 1
        try:
            response = client.get(url)
        except Exception as error:  # noqa: BLE001 (the test client re-raises a view's exception: a 500)
            seen[url] = 500
            print(f"{url}: {type(error).__name__}: {error}")
            continue
        seen[url] = response.status_code
        if response.status_code == 200 and "html" in response.get("Content-Type", ""):
            for link in LINK.findall(response.content.decode()):
                target = urljoin(url, link.replace("&amp;", "&"))
                parts = urlsplit(target)
                if parts.netloc or not parts.path.startswith("/") or parts.path.startswith(NOT_VISITED):
                    continue
                if target not in seen:
                    queue.append(target)


def test_every_page_and_export_answers_degenerate_data_without_a_500(client):
    for shape in SHAPES:
        slug = shape.replace(" ", "-")
        do_import_judgments(filename="l.csv", data=labels_file(shape), benchmark_slug=slug, allow_new_models=True)
    client.force_login(make_user("ada", "admin", "viewer", "adjudicator"))
    visited: dict[str, int] = {}
    for shape in (shape.replace(" ", "-") for shape in SHAPES):
        for url in (
            f"/leaderboards/baseline/?run={shape}|judge-x|overall&baseline=m1",
            f"/leaderboards/baseline.csv?benchmark={shape}&judge=judge-x&baseline=m1",
            f"/leaderboards/baseline/?run={shape}|judge-x|overall&baseline=m2&estimator=stratified",
            f"/leaderboards/baseline/?run={shape}|judge-x|overall&baseline=m3&interval=anytime",
            f"/judges/?benchmark={shape}",
            f"/leaderboards/?benchmark={shape}&style=1",
        ):
            crawl(client, url, visited)
            assert url in visited, url
    crawl(client, "/", visited)
    assert len(visited) > 300, len(visited)
    assert [url for url, status in visited.items() if status >= 500] == []
