"""A judge's definition as one value, and what one version changes from the next."""

from __future__ import annotations

import pytest

from evalhub.core.alignment.versions import JudgeDefinition, WorkedExample, changes

BASE = JudgeDefinition(spec="openai:gpt-4o-mini", instructions="Prefer the answer that is correct.\nBe brief.")


def test_a_first_version_lists_its_spec_and_what_it_sets_and_a_copy_changes_nothing():
    assert [(c.field, c.after) for c in changes(None, BASE)] == [
        ("spec", "openai:gpt-4o-mini"),
        ("instructions", "2 line(s)"),
    ]
    assert changes(BASE, JudgeDefinition.from_json(BASE.as_json())) == []


def test_each_changed_field_is_listed_with_the_instructions_as_a_unified_diff_and_examples_by_heading():
    example = WorkedExample("Is 221 prime?", "No: 13 x 17.", "Yes.", 1, "math")
    after = JudgeDefinition(
        spec=BASE.spec,
        privileged_sources=("reference_answer",),
        instructions="Prefer the answer that is correct.\nCheck each step.",
        examples=(example,),
    )
    found = {change.field: change for change in changes(BASE, after)}
    assert list(found) == ["privileged_sources", "instructions", "examples"]
    assert (found["privileged_sources"].before, found["privileged_sources"].after) == ("none", "reference_answer")
    assert found["instructions"].lines == (
        "@@ -1,2 +1,2 @@",
        " Prefer the answer that is correct.",
        "-Be brief.",
        "+Check each step.",
    )
    assert found["examples"].lines == ("+ Is 221 prime? → 1",)


def test_a_stored_definition_with_an_unknown_field_is_refused():
    with pytest.raises(ValueError, match="unknown judge field"):
        JudgeDefinition.from_json({**BASE.as_json(), "colour": "blue"})
