"""Model output as people read it: Markdown rendered to HTML that is safe to put in a page.

Responses, debate turns, rationales, hints and references are Markdown in practice. They are
written by models and by whoever uploaded a file, so they are hostile input: the parser never
passes raw HTML through (it is shown as text), and its output then goes through an allow-list
sanitiser, so a parser bug still cannot put a script, an event handler, an `hx-*` attribute, a
`javascript:` / `data:` link or a remote image into a page. LaTeX stays as the text that was
written ($…$, $$…$$, \\(…\\), \\[…\\]): Markdown must not eat its underscores and backslashes.
"""

from __future__ import annotations

import html
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "span",
    "div",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}
# Only what the renderer itself writes: code highlighting classes, table alignment, math.
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "span": {"class"},
    "div": {"class"},
    "pre": {"class"},
    "th": {"class"},
    "td": {"class"},
    "ol": {"start"},
}
LINK_SCHEMES = {"http", "https", "mailto"}
CODE_FORMATTER = HtmlFormatter(nowrap=True)
MATH_DELIMITERS = {
    "math_inline": ("$", "$"),
    "math_inline_double": ("$$", "$$"),
    "math_block": ("$$", "$$"),
    "math_block_label": ("$$", "$$"),
}
LATEX_BRACKETS = {"(": ")", "[": "]"}


def _latex_brackets(state: StateInline, silent: bool) -> bool:
    r"""Keep \(…\) and \[…\] whole, before Markdown's escapes turn `\(` into `(`."""
    start = state.pos
    if state.src[start] != "\\" or start + 1 >= state.posMax:
        return False
    closer = LATEX_BRACKETS.get(state.src[start + 1])
    if closer is None:
        return False
    end = state.src.find("\\" + closer, start + 2, state.posMax)
    if end < 0:
        return False
    if not silent:
        token = state.push("latex_text", "", 0)
        token.content = state.src[start : end + 2]
    state.pos = end + 2
    return True


def _render_math(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    opening, closing = MATH_DELIMITERS.get(token.type, ("", ""))
    source = f"{opening}{token.content}{closing}" if opening else token.content
    tag = "div" if token.block else "span"
    return f'<{tag} class="math">{html.escape(source)}</{tag}>'


def _render_image(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # No remote images (they leak who reads what) and no data: images: the alt text and the address, as text.
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    return html.escape(f"[image: {alt or 'no description'}] ({token.attrGet('src') or ''})")


def _render_cell(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # The page's CSP refuses inline styles, so a column's alignment becomes a class.
    token = tokens[idx]
    style = str(token.attrGet("style") or "")
    if style.startswith("text-align:"):
        token.attrs.pop("style")
        token.attrSet("class", "align-" + style.removeprefix("text-align:"))
    return self.renderToken(tokens, idx, options, env)


def _highlight(code: str, language: str, attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(language.strip()) if language.strip() else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it escapes the code itself
    return str(highlight(code, lexer, CODE_FORMATTER))


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable(["table", "strikethrough"])
    # Pandoc's rule for $…$: no space just inside either dollar, and no digit just after the closing one,
    # so prose between two amounts ("$5 or $ 6", "$7000 … $7560") stays prose.
    parser.use(dollarmath_plugin, allow_digits=False, allow_space=False, double_inline=True)
    parser.inline.ruler.before("escape", "latex_text", _latex_brackets)
    for kind in (*MATH_DELIMITERS, "latex_text"):
        parser.add_render_rule(kind, _render_math)
    parser.add_render_rule("image", _render_image)
    for kind in ("th_open", "td_open"):
        parser.add_render_rule(kind, _render_cell)
    return parser


PARSER = _parser()


def sanitise(fragment: str) -> str:
    """Keep only the allow-listed tags, attributes and link schemes of an HTML fragment."""
    return nh3.clean(
        fragment,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=LINK_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


# Short texts come back again and again (a debate's turns, the two submissions on every
# adjudication screen) and are rendered once per process; a prompt's source can be a whole paper,
# and 4,096 of those must not stay in memory, so long texts are rendered each time.
CACHED_UP_TO = 20_000  # characters


def render_markdown(text: str) -> str:
    """Safe HTML for a Markdown text."""
    if not text:
        return ""
    if len(text) > CACHED_UP_TO:
        return _render(text)
    return _render_cached(text)


def _render(text: str) -> str:
    return sanitise(PARSER.render(text))


_render_cached = lru_cache(maxsize=4096)(_render)
