from __future__ import annotations

from evalhub.core.charts import rating_columns


def cell(mean: float) -> dict:
    return {"mean_benign": 4.0, "mean_adversarial": mean}


def test_rubric_names_are_written_whole_and_groups_are_wide_enough_for_them():
    rows = [
        {"rubric": name, "subtle": cell(3.0), "extreme": cell(1.5)}
        for name in ("correctness", "informativeness", "all")
    ]
    chart = rating_columns(rows)
    assert [label["text"] for label in chart["labels"]] == ["correctness", "informativeness", "all"]
    centres = [label["x"] for label in chart["labels"]]
    spacing = centres[1] - centres[0]
    assert spacing >= 6.5 * len("informativeness"), "neighbouring names do not overlap"
    assert chart["width"] >= centres[-1] + spacing / 2
