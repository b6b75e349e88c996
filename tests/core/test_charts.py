from __future__ import annotations

from evalhub.core.charts import interval_chart


def test_rows_keep_their_order_and_whiskers_sit_around_the_marker():
    chart = interval_chart([{"name": "a", "mean": 1.0, "low": 0.5, "high": 1.5}, {"name": "b", "mean": 2.0}])
    first, second = chart["rows"]
    assert first["label"] == "a" and first["x_low"] < first["x"] < first["x_high"]
    assert second["x_low"] is None and second["y"] > first["y"]
    assert first["x"] < second["x"]


def test_wide_scales_get_whole_number_ticks_and_narrow_ones_three_figures():
    wide = interval_chart([{"name": "a", "mean": 1000.0, "low": 700.0, "high": 1400.0}])
    assert all("e" not in t["label"] and "." not in t["label"] for t in wide["ticks"])
    narrow = interval_chart([{"name": "a", "mean": 0.12, "low": 0.1, "high": 0.14}])
    assert any("." in t["label"] for t in narrow["ticks"])


def test_nothing_to_draw_is_an_empty_chart():
    assert interval_chart([{"name": "a", "mean": None}])["rows"] == []
