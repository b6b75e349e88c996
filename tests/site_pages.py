"""The pages of a demo site with one debate run, for tests that visit them all (blinding, CSP)."""

from __future__ import annotations


def demo_pages(run, debate, prompt) -> list[str]:
    """Every HTML page about the demo benchmark, its models and one debate run (exports apart)."""
    return [
        "/",
        "/benchmarks/",
        "/benchmarks/demo/",
        f"/benchmarks/demo/prompts/{prompt.pk}/",
        "/models/",
        "/models/demo-thorough/",
        "/leaderboards/",
        "/debates/",
        f"/debates/runs/{run.pk}/",
        f"/debates/runs/{run.pk}/judges/",
        f"/debates/{debate.pk}/",
        "/jobs/",
        f"/jobs/{run.job_id}/",
        "/generation/",
        "/adjudicate/",
        "/adjudicate/all/",
        f"/adjudicate/runs/{run.pk}/agreement/",
    ]
