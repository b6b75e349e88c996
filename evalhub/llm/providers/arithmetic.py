"""An offline candidate that is not a language model: a calculator that reads what it is shown.

It finds the arithmetic written in its prompt (and in the hints it is given), evaluates the
longest expression, the latest one on a tie, and answers with it in \\boxed{}; with no expression it
says so and boxes the first number it saw, a guess. On a maths benchmark whose problems are
worded without arithmetic and whose reference solutions write it out step by step, hints make it
right more often, tier by tier: the quickstart's generation run shows hint tiers and per-tier
accuracy with no key and no weights. It always says what it is.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any

from evalhub.llm.base import Sampling
from evalhub.llm.providers.offline import OfflineChatClient
from evalhub.llm.types import Completion, Message

OPERATORS = {"×": "*", "·": "*", "−": "-", "÷": "/"}
# Runs of numbers, operators and brackets; the calculator evaluates only those with an operator.
_RUN = re.compile(r"[\d(][\d\s.+\-*/×·−÷()]*[\d)]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Nobody writes longer arithmetic in a hint; longer runs (a hostile prompt's "1+1+…") would only
# cost parsing time and recursion depth.
LONGEST_EXPRESSION = 200
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return float(_BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError("not plain arithmetic")


def expressions(text: str) -> list[tuple[int, str, float]]:
    """(operator count, expression, value) of every evaluable arithmetic run with a finite value,
    in reading order."""
    found = []
    for match in _RUN.finditer(text):
        source = match.group(0).strip()
        python = "".join(OPERATORS.get(ch, ch) for ch in source)
        count = sum(python.count(op) for op in "+-*/")
        if not count or len(source) > LONGEST_EXPRESSION:
            continue
        try:
            value = float(_evaluate(ast.parse(python, mode="eval")))
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError):
            continue  # not arithmetic, or a number no float holds
        if math.isfinite(value):
            found.append((count, source, value))
    return found


def answer(text: str) -> str:
    found = expressions(text)
    if not found:
        first = _NUMBER.search(text)
        guess = first.group(0) if first else "0"
        return f"I found no calculation to do, so this is a guess.\n\nThe answer is \\boxed{{{guess}}}."
    _, source, value = max(reversed(found), key=lambda item: item[0])  # longest; the latest on a tie
    shown = str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    return f"The calculation is {source} = {shown}.\n\nThe answer is \\boxed{{{shown}}}."


class ArithmeticCandidate(OfflineChatClient):
    provider = "arithmetic"

    def __init__(self, model: str = "calculator", **options: Any) -> None:
        super().__init__(model, **options)

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        prompt = "\n".join(m["content"] for m in messages if m["role"] == "user")
        return self.offline_completion(prompt, "Offline calculator (not a language model). " + answer(prompt))
