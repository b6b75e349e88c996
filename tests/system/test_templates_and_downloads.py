from __future__ import annotations

from django.template import Context, Template

from evalhub.core.charts import bar_chart, interval_chart, rating_columns


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


def test_every_chart_is_drawn_by_a_tag_that_escapes_its_labels_and_reads_without_colour():
    bars = bar_chart([("<b>swap</b>", 1.4), ("typo", 0.4)])
    html = Template("{% load charts %}{% bar_chart chart 'D per perturbation' %}").render(Context({"chart": bars}))
    assert "<b>swap" not in html and "&lt;b&gt;swap&lt;/b&gt;" in html
    assert "1.40 ✓" in html and "0.40 ✓" not in html, "a tick marks the bars at or past D = 1"
    assert html.count('class="marker baseline"') == 1
    rows = [{"rubric": "<i>x</i>", "subtle": {"mean_benign": 4.0, "mean_adversarial": 3.0}, "extreme": None}]
    columns = Template("{% load charts %}{% rating_chart chart 'ratings' %}").render(
        Context({"chart": rating_columns(rows)})
    )
    assert "&lt;i&gt;x&lt;/i&gt;" in columns and "<i>" not in columns
    assert ">B</text>" in columns and ">S</text>" in columns, "each column is tagged under it"


def test_json_downloads_write_numpy_numbers_as_numbers_and_times_as_iso():
    import datetime
    import json

    import numpy as np

    from evalhub.system.downloads import download

    response = download([{"rank": np.int64(2), "mean": np.float64(0.5), "at": datetime.date(2026, 1, 2)}], "json", "x")
    assert json.loads(response.content) == [{"rank": 2, "mean": 0.5, "at": "2026-01-02"}]
