"""The manual says what the code does: the model-access table and every extending page's example
(which registries have a page is tests/test_extension_points.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _model_access_table() -> dict[str, dict[str, str]]:
    """docs/model-access.md's provider table: each row by its provider's first words, cell by column."""
    lines = [line for line in (ROOT / "docs" / "model-access.md").read_text().splitlines() if line.startswith("| ")]
    split = [[cell.strip() for cell in line.replace("\\|", "¦").strip("|").split("|")] for line in lines]
    header, rows = split[0], split[2:]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


ROWS_OF_PROVIDERS = {
    "openai": "OpenAI",
    "azure": "Azure OpenAI",
    "openai-compatible": "OpenAI-compatible",
    "anthropic": "Anthropic",
    "transformers": "in-process transformers",
    "heuristic": "offline",
}


@pytest.mark.parametrize("provider", sorted(ROWS_OF_PROVIDERS))
def test_the_model_access_table_says_what_each_provider_takes_and_gives(provider):
    """The spec options a row lists are the registry's for that provider, and its log-probabilities cell
    says yes exactly where the provider's client gives them."""
    from evalhub.llm.capabilities import LOGPROB_PROVIDERS
    from evalhub.llm.registry import OPTIONS_OF_PROVIDER

    table = _model_access_table()
    row = next(cells for name, cells in table.items() if name.startswith(ROWS_OF_PROVIDERS[provider]))
    listed = {option.strip("` ") for option in row["spec options"].split(",") if option.strip("` —")}
    assert listed == OPTIONS_OF_PROVIDER.get(provider, set())
    assert (row["log-probabilities"] != "no") == (provider in LOGPROB_PROVIDERS)


@pytest.mark.parametrize(
    "page", sorted(p.name for p in (ROOT / "docs" / "extending").glob("*.md") if p.name != "index.md")
)
def test_every_extending_page_shows_its_extension_in_code(page):
    """Five of the eight pages said what to write and showed none of it."""
    assert "```python" in (ROOT / "docs" / "extending" / page).read_text()
