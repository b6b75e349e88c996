from __future__ import annotations

import pytest

from evalhub.core.prompts.generation import (
    BUILTIN_TEMPLATES,
    check_template,
    hints_block,
    placeholders_in,
    render_messages,
)


def test_a_template_with_an_unknown_placeholder_is_rejected_with_the_names_to_use():
    errors = check_template("", "Solve {problem}.")
    assert len(errors) == 1
    assert "{problem}" in errors[0]
    assert "{prompt}" in errors[0]


@pytest.mark.parametrize(
    "user",
    [
        "Solve {}.",
        "Solve {0}.",
        "Solve {prompt:>10}.",
        "Solve {prompt!r}.",
        "Solve {prompt.upper}.",
        "Solve {prompt[0]}.",
        "Solve {prompt",
    ],
)
def test_positional_fields_format_specs_attribute_access_and_broken_braces_are_refused(user):
    assert check_template("", user)


def test_literal_braces_are_written_doubled_and_are_not_placeholders():
    assert check_template('Answer in JSON like {{"x": 1}}.', "{prompt}") == []
    assert placeholders_in('{{"x": 1}} {prompt}') == ["prompt"]


def test_an_empty_user_text_is_refused():
    assert check_template("System.", "  ") == ["User text: it is what the candidate answers, so it cannot be empty."]


def test_hints_go_where_the_template_puts_them_and_tier_zero_shows_none():
    messages = render_messages("", "Q: {prompt}{hints}\nA:", {"prompt": "2+2?"}, ["Add.", "Two and two."])
    assert messages == [{"role": "user", "content": "Q: 2+2?\n\nHints:\nHint 1: Add.\nHint 2: Two and two.\nA:"}]
    assert render_messages("", "Q: {prompt}{hints}", {"prompt": "2+2?"}, []) == [{"role": "user", "content": "Q: 2+2?"}]


def test_a_template_without_a_hints_placeholder_gets_the_hints_appended():
    messages = render_messages("Be brief.", "{prompt}", {"prompt": "2+2?"}, ["Add."])
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1]["content"] == "2+2?" + hints_block(["Add."])


def test_the_gre_bench_template_is_the_papers_review_prompt_fed_with_the_source():
    review = next(t for t in BUILTIN_TEMPLATES if t.slug == "gre-bench-review")
    messages = render_messages(review.system, review.user, {"source": "PAPER TEXT", "prompt": "ignored"}, [])
    assert messages[1] == {"role": "user", "content": "PAPER TEXT"}
    # GEM, Appendix C.3
    assert "inside <summary> tags" in messages[0]["content"]
    assert (
        "give a numbered list of at least 4 key reasons why this paper should potentially be accepted"
        in (messages[0]["content"])
    )
    assert all(check_template(t.system, t.user) == [] for t in BUILTIN_TEMPLATES)
