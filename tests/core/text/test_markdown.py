from __future__ import annotations

import pytest

from evalhub.core.text.markdown import CACHED_UP_TO, _render_cached, render_markdown
from tests.hostile_markdown import HOSTILE, active_markup


def test_hostile_markdown_renders_with_nothing_that_can_act():
    html = render_markdown(HOSTILE)
    boxes, problems = active_markup(f'<div class="md">{html}</div>')
    assert boxes == 1
    assert problems == []


@pytest.mark.parametrize(
    "needle",
    ["<script", "onerror", "onclick", "onmouseover", "hx-get", "javascript:", "data:text"]
    + ["<img", "<iframe", "<style", "<form"],
)
def test_no_active_piece_of_hostile_markdown_survives_as_markup(needle):
    html = render_markdown(HOSTILE)
    # What was written may stay readable as (escaped) text, never inside a tag.
    position = html.find(needle)
    while position >= 0:
        inside_a_tag = html.rfind("<", 0, position + 1) > html.rfind(">", 0, position)
        assert not inside_a_tag, f"{needle!r} is markup in {html[max(0, position - 60) : position + 40]!r}"
        position = html.find(needle, position + 1)


def test_raw_html_is_shown_as_text():
    assert render_markdown("<b>bold</b>") == "<p>&lt;b&gt;bold&lt;/b&gt;</p>\n"


def test_images_become_their_description_and_address_as_text():
    html = render_markdown("![a chart](https://tracker.example/p.png)")
    assert "<img" not in html
    assert "[image: a chart] (https://tracker.example/p.png)" in html


def test_safe_links_stay_links_and_open_no_window_handle():
    html = render_markdown("[docs](https://example.org/a)")
    assert html == '<p><a href="https://example.org/a" rel="noopener noreferrer nofollow">docs</a></p>\n'


def test_tables_lists_and_emphasis_render():
    html = render_markdown("| x | y |\n|:-:|--:|\n| 1 | 2 |\n\n- one\n- **two**\n\n1. a\n")
    assert '<th class="align-center">x</th>' in html
    assert '<td class="align-right">2</td>' in html
    assert "<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>" in html
    assert "<ol>\n<li>a</li>\n</ol>" in html


def test_code_blocks_are_highlighted_and_their_html_is_text():
    html = render_markdown("```python\ndef f():\n    return '<b>'\n```")
    assert '<pre><code class="language-python"><span class="k">def</span>' in html
    assert "&lt;b&gt;" in html
    assert "<b>" not in html


def test_a_code_block_in_an_unknown_language_is_plain_escaped_text():
    assert render_markdown("```nosuchlang\n<i>x</i>\n```") == (
        '<pre><code class="language-nosuchlang">&lt;i&gt;x&lt;/i&gt;\n</code></pre>\n'
    )


@pytest.mark.parametrize(
    "latex",
    [r"$a_b + c_d^*$", r"$$\sum_{i} x_i * y_i$$", r"\(x_1 * y_2\)", r"\[ \frac{a}{b}_c \]"],
)
def test_latex_stays_the_text_that_was_written(latex):
    html = render_markdown(f"so {latex} holds")
    assert f'<span class="math">{latex}</span>' in html or f'<div class="math">{latex}</div>' in html


def test_a_display_formula_on_its_own_lines_stays_whole():
    html = render_markdown("$$\n\\boxed{x_1 = 2}\n$$")
    assert html == '<div class="math">$$\n\\boxed{x_1 = 2}\n$$</div>'


def test_dollar_amounts_are_not_mistaken_for_maths():
    assert render_markdown("it costs $5 and $6") == "<p>it costs $5 and $6</p>\n"


@pytest.mark.parametrize("prose", ["Pay $x or $ 7560 later.", "from $7000 to $ 7560", "a $ b$ c"])
def test_a_dollar_with_a_space_just_inside_opens_or_closes_no_maths(prose):
    """As pandoc reads $…$: prose between two amounts was typeset as one formula ("$x or $")."""
    assert 'class="math' not in render_markdown(prose)
    assert render_markdown("so $a + b$ holds") == '<p>so <span class="math">$a + b$</span> holds</p>\n'


def test_an_empty_text_renders_to_nothing():
    assert render_markdown("") == ""


def test_short_texts_are_rendered_once_and_long_ones_are_not_kept_in_memory():
    _render_cached.cache_clear()
    short = "*a turn*"
    assert render_markdown(short) == render_markdown(short) == "<p><em>a turn</em></p>\n"
    assert _render_cached.cache_info().hits == 1
    paper = "word " * (CACHED_UP_TO // 5 + 1)
    assert render_markdown(paper) == f"<p>{paper.strip()}</p>\n"
    assert _render_cached.cache_info().currsize == 1, "the long text is not cached"


def test_no_page_style_uses_a_class_name_that_pygments_gives_to_code_tokens():
    """A chart colour named `.s1` painted every string literal in highlighted code orange."""
    import re
    from pathlib import Path

    from pygments.token import STANDARD_TYPES

    css = (Path(__file__).resolve().parents[3] / "static" / "css" / "evalhub.css").read_text()
    page_classes = set(re.findall(r"\.([A-Za-z_][\w-]*)", re.sub(r"/\*.*?\*/", "", css, flags=re.S)))
    token_classes = {name for name in STANDARD_TYPES.values() if name}
    assert not page_classes & token_classes, sorted(page_classes & token_classes)
