"""The papers a YESciEval prompt shows its judge come from the import's `metadata.papers` column, in any
of the shapes a file carries them, and fall back to the prompt's source."""

from __future__ import annotations

import pytest

from evalhub.core.yescieval.papers import papers_of

LISTED = [{"title": "Rivers", "abstract": "Rivers carry sediment."}, {"title": "Deltas", "abstract": "Deltas grow."}]
EXPECTED = {"Rivers": "Rivers carry sediment.", "Deltas": "Deltas grow."}


@pytest.mark.parametrize(
    "given",
    [
        LISTED,
        EXPECTED,
        '[{"title": "Rivers", "abstract": "Rivers carry sediment."}, {"title": "Deltas", "abstract": "Deltas grow."}]',
    ],
)
def test_papers_come_as_a_list_an_object_or_json_text(given):
    assert papers_of({"papers": given}) == EXPECTED
    assert list(papers_of({"papers": given})) == ["Rivers", "Deltas"]  # in the file's order


def test_without_papers_the_source_is_one_untitled_paper_and_nothing_is_nothing():
    assert papers_of({}, "The abstracts.") == {"": "The abstracts."}
    assert papers_of({"papers": []}, "") == {}


def test_untitled_papers_among_several_keep_each_abstract():
    assert papers_of({"papers": [{"abstract": "One."}, {"abstract": "Two."}]}) == {"Paper 1": "One.", "Paper 2": "Two."}


@pytest.mark.parametrize("given", ["not json", [1, 2], 7])
def test_anything_else_is_refused_with_what_to_give(given):
    with pytest.raises(ValueError, match="metadata.papers"):
        papers_of({"papers": given})
