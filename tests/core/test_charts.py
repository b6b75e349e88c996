from __future__ import annotations

import pytest

from evalhub.core.charts import interval_chart, nice_ticks


def test_rows_keep_their_order_and_whiskers_sit_around_the_marker():
    chart = interval_chart([{"name": "a", "mean": 1.0, "low": 0.5, "high": 1.5}, {"name": "b", "mean": 2.0}])
    first, second = chart["rows"]
    assert first["label"] == "a"
    assert first["x_low"] < first["x"] < first["x_high"]
    assert second["x_low"] is None
    assert second["y"] > first["y"]
    assert first["x"] < second["x"]


def test_wide_scales_get_whole_number_ticks_and_narrow_ones_three_figures():
    wide = interval_chart([{"name": "a", "mean": 1000.0, "low": 700.0, "high": 1400.0}])
    assert all("e" not in t["label"] and "." not in t["label"] for t in wide["ticks"])
    narrow = interval_chart([{"name": "a", "mean": 0.12, "low": 0.1, "high": 0.14}])
    assert any("." in t["label"] for t in narrow["ticks"])


def test_nothing_to_draw_is_an_empty_chart():
    assert interval_chart([{"name": "a", "mean": None}])["rows"] == []


@pytest.mark.parametrize(
    ("low", "high", "labels"),
    [
        (-0.00502, 0.0121, ["-0.005", "0.000", "0.005", "0.010"]),
        (917.3, 1089.6, ["950", "1000", "1050"]),
        (-0.0718, 0.868, ["0.0", "0.2", "0.4", "0.6", "0.8"]),
    ],
)
def test_ticks_sit_at_round_steps_with_short_labels(low, high, labels):
    # GEM's chart once showed -0.00502, and the judge lab's -0.0718.
    assert [label for _, label in nice_ticks(low, high)] == labels


def test_the_label_column_fits_a_long_model_name_whole():
    """GEM's chart cut 'Mixtral-8x7B-Instruct-v0.1_concise' at its left edge: a fixed 220 px column."""
    from evalhub.core.charts import LABEL_CHAR_PX, label_chars

    name = "Mixtral-8x7B-Instruct-v0.1_concise (GEM-S)"
    chart = interval_chart([{"name": name, "mean": 1.0}, {"name": "phi-2", "mean": 2.0}])
    assert label_chars(chart["label_width"]) >= len(name)
    assert chart["label_width"] - 8 >= LABEL_CHAR_PX * len(name), "the text, right-aligned, starts inside the chart"
    assert min(row["x"] for row in chart["rows"]) > chart["label_width"]
