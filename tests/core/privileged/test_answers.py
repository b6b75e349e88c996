from __future__ import annotations

import pytest

from evalhub.core.privileged.answers import answers_match, extract_answer, to_expression


@pytest.mark.parametrize(
    ("predicted", "reference", "exact", "normalised", "symbolic"),
    [
        ("42", "42", True, True, True),
        ("$42$", "42", False, True, True),
        ("\\dfrac{1}{2}", "\\frac{1}{2}", False, True, True),
        ("0.5", "\\frac{1}{2}", False, False, True),
        ("2\\sqrt{2}", "\\sqrt{8}", False, False, True),
        ("x^2 + 2x + 1", "(x+1)^2", False, False, True),
        ("27^\\circ, 63^\\circ", "27,63", False, True, True),
        ("(1, 2)", "(1,2)", False, True, True),
        ("(2, 1)", "(1,2)", False, False, False),
        ("\\frac{1}{3}", "0.33", False, False, False),
        ("7", "8", False, False, False),
        ("(B)", "B", False, False, True),
    ],
)
def test_answers_match_exactly_after_normalising_or_symbolically(predicted, reference, exact, normalised, symbolic):
    assert answers_match(predicted, reference, "exact") is exact
    assert answers_match(predicted, reference, "normalised") is normalised
    assert answers_match(predicted, reference, "symbolic") is symbolic


def test_a_response_without_a_final_answer_never_matches():
    assert extract_answer("I think it is probably around forty.") is None
    assert answers_match(None, "40", "symbolic") is False


def test_the_answer_a_response_commits_to_is_its_last_boxed_one():
    assert extract_answer("First guess \\boxed{3}; on reflection \\boxed{\\frac{3}{4}}.") == "\\frac{3}{4}"


@pytest.mark.parametrize(
    "hostile",
    ["__import__('os').system('echo pwned')", "().__class__", "lambda: 1", "open('x')", "a" * 300],
)
def test_untrusted_text_never_reaches_the_sympy_parser(hostile):
    # SymPy's parse_expr evaluates its input: anything but maths must be refused before it.
    assert to_expression(hostile) is None
    assert answers_match(hostile, "1", "symbolic") is False


def test_plain_numbers_compare_exactly_without_sympy(monkeypatch):
    import evalhub.core.privileged.answers as answers

    monkeypatch.setattr(answers, "_symbolic_equal", lambda a, b: pytest.fail("SymPy was asked about plain numbers"))
    assert answers_match("2.50", "2.5", "symbolic")
    assert answers_match("-3", "-3.0", "symbolic")
    assert not answers_match("0.1", "0.10000001", "symbolic")
