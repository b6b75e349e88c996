"""Is a response's final answer the reference's? Exact, normalised, or symbolically equal (SymPy).

The privileged-information paper (Section 3.2) measures accuracy against a known final answer,
and Section 3.3 uses a SymPy equivalence checker. Model output is untrusted text: before SymPy
sees it, it must consist of numbers, operators, brackets, single-letter symbols and a short
list of function names, because SymPy's parser evaluates what it is given.
"""

from __future__ import annotations

import re
from enum import StrEnum
from fractions import Fraction

from evalhub.core.privileged.hints import final_answer, normalise


class MatchMode(StrEnum):
    EXACT = "exact"
    NORMALISED = "normalised"
    SYMBOLIC = "symbolic"


def extract_answer(response: str) -> str | None:
    """The answer a response commits to: its last \\boxed{…}, `#### x`, or "the answer is x"."""
    return final_answer(response)


_FUNCTIONS = {"sqrt", "pi", "log", "ln", "exp", "sin", "cos", "tan", "oo", "e", "i"}
_SAFE = re.compile(r"^[0-9a-z+\-*/().,\s]*$")
_MAX_LENGTH = 200


def _frac(text: str) -> str:
    # \frac{a}{b} → ((a)/(b)), innermost first so nested fractions resolve.
    pattern = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
    while True:
        text, count = pattern.subn(r"((\1)/(\2))", text)
        if not count:
            return text


def to_expression(answer: str) -> str | None:
    """A SymPy-parseable expression for a (LaTeX-ish) answer, or None when it is not safe to parse."""
    text = normalise(answer)
    text = _frac(text)
    text = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", text)
    for old, new in (
        ("\\cdot", "*"),
        ("\\times", "*"),
        ("\\pi", "pi"),
        ("\\infty", "oo"),
        ("\\ln", "ln"),
        ("\\log", "log"),
        ("\\sin", "sin"),
        ("\\cos", "cos"),
        ("\\tan", "tan"),
        ("^", "**"),
        ("{", "("),
        ("}", ")"),
    ):
        text = text.replace(old, new)
    if len(text) > _MAX_LENGTH or "\\" in text or not _SAFE.match(text) or "__" in text:
        return None
    words = re.findall(r"[a-z]{2,}", text)
    if any(word not in _FUNCTIONS for word in words):
        return None
    return text


def _symbolic_equal(left: str, right: str) -> bool:
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    transformations = (*standard_transformations, implicit_multiplication_application, convert_xor)
    names = {"e": sympy.E, "i": sympy.I, "pi": sympy.pi, "ln": sympy.log, "oo": sympy.oo}
    try:
        a = parse_expr(left, local_dict=names, transformations=transformations, evaluate=True)
        b = parse_expr(right, local_dict=names, transformations=transformations, evaluate=True)
        difference = sympy.simplify(a - b)
    except Exception:  # SymPy raises many kinds on odd input (SyntaxError, TypeError, TokenError…)
        return False
    return bool(difference == 0)


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


def _number(expression: str) -> Fraction | None:
    text = expression.strip().strip("()")
    return Fraction(text) if _NUMBER.match(text) else None


def _equal(left: str, right: str) -> bool:
    # Plain numbers compare exactly without SymPy (most final answers; SymPy costs milliseconds each).
    a, b = _number(left), _number(right)
    if a is not None and b is not None:
        return a == b
    return _symbolic_equal(left, right)


def _parts(expression: str) -> list[str]:
    inner = expression.strip()
    if inner[:1] == "(" and inner[-1:] == ")" and inner.count("(") == 1:
        inner = inner[1:-1]  # an ordered pair or a tuple: compare element by element
    return [part for part in inner.split(",") if part]


def answers_match(predicted: str | None, reference: str | None, mode: MatchMode | str = MatchMode.NORMALISED) -> bool:
    """Exact: the same text once stripped. Normalised: equal after `hints.normalise`. Symbolic: also
    equal when SymPy simplifies the difference to 0 (lists compare element by element, in order)."""
    if predicted is None or reference is None:
        return False
    mode = MatchMode(mode)
    if predicted.strip() == reference.strip():
        return True
    if mode == MatchMode.EXACT:
        return False
    if normalise(predicted) == normalise(reference):
        return True
    if mode == MatchMode.NORMALISED:
        return False
    left, right = to_expression(predicted), to_expression(reference)
    if left is None or right is None:
        return False
    left_parts, right_parts = _parts(left), _parts(right)
    if len(left_parts) != len(right_parts) or not left_parts:
        return False
    return all(_equal(a, b) for a, b in zip(left_parts, right_parts, strict=True))
