from __future__ import annotations

from django.template import Context, Template

from evalhub.core.charts import interval_chart


def test_the_chart_tag_escapes_names_and_labels_and_marks_baselines_with_a_square():
    chart = interval_chart(
        [
            {"name": "<script>x</script>", "mean": 0.3, "low": 0.1, "high": 0.5},
            {"name": "People", "mean": 0.2, "low": 0.1, "high": 0.3, "baseline": True},
        ]
    )
    html = Template("{% load charts %}{% interval_chart chart label 2 %}").render(
        Context({"chart": chart, "label": 'a "quoted" label'})
    )
    assert "<script>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert 'aria-label="a &quot;quoted&quot; label"' in html
    assert html.count("<circle") == 1
    assert html.count('class="marker baseline"') == 1
    assert html.count('class="whisker"') == 6
    assert "&lt;script&gt;x&lt;/script&gt;: 0.30" in html


def test_an_empty_chart_draws_nothing():
    assert Template("{% load charts %}{% interval_chart chart 'x' %}").render(Context({"chart": {"rows": []}})) == ""


def test_json_downloads_write_numpy_numbers_as_numbers_and_times_as_iso():
    import datetime
    import json

    import numpy as np

    from evalhub.system.downloads import download

    response = download([{"rank": np.int64(2), "mean": np.float64(0.5), "at": datetime.date(2026, 1, 2)}], "json", "x")
    assert json.loads(response.content) == [{"rank": 2, "mean": 0.5, "at": "2026-01-02"}]
