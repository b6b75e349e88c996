"""Slugs: one full-match rule, and a repair for rows written before it."""

from __future__ import annotations

import pytest

from evalhub.core.files.slugs import is_slug, repaired_slugs


@pytest.mark.parametrize(("text", "ok"), [("gpt-4o_mini", True), ("alpha\n", False), ("", False), ("a b", False)])
def test_a_slug_must_match_in_full_even_before_a_final_newline(text, ok):
    assert is_slug(text) is ok


def test_invalid_slugs_are_repaired_to_unique_valid_ones_and_valid_ones_are_kept():
    repairs = repaired_slugs(["alpha", "alpha\n", "beta gamma", " ", "alpha-2", "alpha\t"])
    assert repairs == {"alpha\n": "alpha-3", "beta gamma": "beta-gamma", " ": "unnamed", "alpha\t": "alpha-4"}
    assert all(is_slug(new) for new in repairs.values())
