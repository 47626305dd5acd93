"""Text from data files, plugins and users, escaped for the format it is written in: one function per format.

Names (dimensions, systems, documents, subsets, metric variants, titles) come from files meta-eval does not control.
Every place that puts such text into an output uses these functions, so that no name can run a command, open a tag or
move the cursor:

- :func:`latex`: a LaTeX text cell or caption; every special character escaped, line breaks and control characters
  as spaces (no line of the output can start a command); :func:`latex_row` for a table row.
- :func:`markdown`: GitHub-flavoured Markdown text or a table cell; every character Markdown or HTML could read
  escaped with a backslash, line breaks as spaces; :func:`markdown_code` for a code span, :func:`markdown_url` for a
  link target.
- :func:`html`: HTML text or an attribute value (``&``, ``<``, ``>``, quotes as entities); :func:`html_url` for a
  relative path as a link or image target.
- :func:`json_in_html`: JSON to embed in a ``<script>`` element: ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX``
  escapes, so that neither ``</script>`` nor ``<!--`` nor ``<script`` can appear (``JSON.parse`` reads it back the
  same).
- :func:`terminal`: control characters (C0, DEL, C1, and the bidirectional overrides) shown as escapes (``\\x1b``,
  ``\\u202e``), never sent to the terminal; :func:`markup` for a rich markup line; :func:`terminal_console` for a
  rich console that shows every printed control character so.

Only the standard library is imported here (``import meta_eval`` must stay light); :func:`terminal_console` imports
rich inside.
"""
from __future__ import annotations

import html as _html
import json as _json
import re

__all__ = ["CONTROL", "file_segment", "html", "html_url", "json_in_html", "latex", "latex_row", "markdown", "markdown_code",
           "markdown_url", "markup", "terminal", "terminal_console"]

#: The characters no output may carry raw: C0 controls (line breaks and tabs included), DEL, C1 controls, the line and
#: paragraph separators and the bidirectional marks, embeddings, overrides and isolates (a name that reverses the
#: text after it).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text, keep: str = "") -> str:
    """``text`` safe to print on a terminal: every control character (:data:`CONTROL`) but those in ``keep`` shown as
    its escape, ``\\x1b`` for ESC, ``\\x0d`` for a carriage return, ``\\u202e`` for a right-to-left override.

    >>> print(terminal("sys\\x1b[2J\\r\\n"))
    sys\\x1b[2J\\x0d\\x0a
    >>> print(terminal("a\\nb", keep="\\n"))
    a
    b
    """
    return CONTROL.sub(lambda m: m.group() if m.group() in keep else _shown(m.group()), str(text))


def markup(text) -> str:
    """``text`` inside a rich markup line (``f"[bold]{markup(name)}[/]"``): control characters shown as escapes
    (:func:`terminal`) and brackets escaped so that rich prints them as written."""
    from rich.markup import escape

    return escape(terminal(text))


def terminal_console(**kwargs):
    """A :class:`rich.console.Console` (``kwargs`` passed on) that shows every control character of what it prints
    as an escape (:func:`terminal`; line breaks and tabs kept), whatever the caller forgot to escape; rich's own
    styles and cursor moves are not text and are kept."""
    from rich.console import Console, RenderHook
    from rich.segment import Segment

    class Shown:
        def __init__(self, renderable):
            self.renderable = renderable

        def __rich_console__(self, console, options):
            for seg in console.render(self.renderable, options):
                if seg.control or not CONTROL.search(seg.text):
                    yield seg
                else:
                    yield Segment(terminal(seg.text, keep="\n\t"), seg.style)

    class Hook(RenderHook):
        def process_renderables(self, renderables):
            return [Shown(r) for r in renderables]

    console = Console(**kwargs)
    console.push_render_hook(Hook())
    return console


_LATEX = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "_": "\\_", "#": "\\#", "$": "\\$", "{": "\\{",
          "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "<": "$<$", ">": "$>$",
          "|": "\\textbar{}", "Δ": "$\\Delta$", "τ": "$\\tau$"}
_LATEX_RE = re.compile("[" + re.escape("".join(_LATEX)) + "]|" + CONTROL.pattern)


def latex(text) -> str:
    """``text`` as literal LaTeX text (a table cell, a caption): ``\\ { } $ & # ^ _ % ~ < > |`` escaped (``\\`` as
    ``\\textbackslash{}``), line breaks and other control characters as spaces, so that no command can be formed and
    no line of the output starts one.

    >>> print(latex("a_b\\n\\\\input{/etc/passwd} 95% <"))
    a\\_b \\textbackslash{}input\\{/etc/passwd\\} 95\\% $<$
    """
    return _LATEX_RE.sub(lambda m: _LATEX.get(m.group(), " "), str(text))


_LATEX_LEAD = re.compile(r"^(\s*)([\[*])")


def latex_row(cells) -> str:
    """``cells`` as a row of a LaTeX tabular, ending in ``\\\\``: each cell escaped (:func:`latex`), and a leading ``[``
    or ``*`` of the first cell braced (``{[}``), so that it is not read as the optional argument (``\\\\[x]``, a
    length) or the star of the ``\\\\`` or ``\\midrule`` before it.

    >>> print(latex_row(["[x]", "[0.1, 0.2]"]))
    {[}x] & [0.1, 0.2] \\\\
    """
    return _LATEX_LEAD.sub(r"\1{\2}", " & ".join(latex(c) for c in cells)) + " \\\\"


_MD_SPECIAL = "\\`*_[]<>|#~$"
#: an ``&`` that starts an entity or character reference (``&amp;``, ``&#60;``); any other ``&`` is read as itself
_MD_ENTITY = re.compile("&(?=#?[0-9A-Za-z]+;)")


def markdown(text) -> str:
    """``text`` as literal Markdown (GitHub-flavoured), safe in a heading, a paragraph or a table cell: every
    character Markdown or an HTML tag could read (backslash, backtick, ``*``, ``_``, brackets, ``<``, ``>``, ``|``,
    ``#``, ``~``, ``$`` (GitHub reads ``$x$`` as math), and an ``&`` that would start an entity such as ``&lt;``) is
    backslash-escaped, line breaks and runs of white space become one space, and other control characters show as
    escapes (:func:`terminal`, its backslash escaped).

    >>> print(markdown("95% CI (a|b) <i>x</i> *y*"), markdown("&lt;i&gt; & x&amp;"))
    95% CI (a\\|b) \\<i\\>x\\</i\\> \\*y\\* \\&lt;i\\&gt; & x\\&amp;
    """
    text = terminal(" ".join(str(text).split()))
    return _MD_ENTITY.sub(r"\\&", "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text))


def markdown_code(text, in_table: bool = False) -> str:
    """``text`` as a Markdown code span (shown verbatim, HTML and emphasis not read): fenced with more backticks
    than the longest run inside it, line breaks as spaces, control characters as escapes; ``in_table``: ``|``
    escaped as GitHub-flavoured Markdown needs inside a table cell.

    >>> print(markdown_code("run -m rouge"), markdown_code("a`b"))
    `run -m rouge` ``a`b``
    """
    text = terminal(re.sub("[\t\n\x0b\x0c\r\x85\u2028\u2029]", " ", str(text)))
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if not text or text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_url(path) -> str:
    """A relative path as a Markdown link or image target: every character but letters, digits, ``/``, ``-``,
    ``_``, ``.`` and ``~`` percent-encoded (a ``)`` or a space cannot end the target)."""
    from urllib.parse import quote

    return quote(str(path), safe="/")


def file_segment(text) -> str:
    """``text`` (a set, subset, level or statistic name from a board's results.json) as part of one file name in
    the board's folder: a path separator (``/``, ``\\``), a NUL or another control character becomes ``_``, so no
    name can reach outside the folder (``../../x`` is ``.._.._x``).

    >>> print(file_segment("../../victim/x"), file_segment("chaganty"))
    .._.._victim_x chaganty
    """
    return re.sub(r"[/\\\x00-\x1f\x7f]", "_", str(text))


def html(text, quote: bool = True) -> str:
    """``text`` as HTML text or a quoted attribute value: ``&``, ``<``, ``>`` (and with ``quote``, ``"`` and ``'``)
    as entities."""
    return _html.escape(str(text), quote=quote)


def html_url(path) -> str:
    """A relative path as an HTML ``href`` or ``src`` value: each segment percent-encoded (:func:`markdown_url`; a
    ``#`` or ``?`` in a file's name is no fragment or query, a space no end), then HTML-escaped.

    >>> print(html_url("b#1 x/index.html"), html_url("figures/q#1-all-summary-spearman.svg"))
    b%231%20x/index.html figures/q%231-all-summary-spearman.svg
    """
    return html(markdown_url(path))


_JSON_IN_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_in_html(obj, **kwargs) -> str:
    """``obj`` as JSON (:func:`json.dumps`, ``kwargs`` passed on) to embed in a ``<script type="application/json">``
    element: ``<``, ``>``, ``&``, U+2028 and U+2029 written as ``\\uXXXX`` escapes (inside strings, the only place
    JSON holds them), so the element can hold no ``</script>``, ``<!--`` or ``<script``; ``JSON.parse`` of the
    element's text gives ``obj`` back.

    >>> json_in_html({"name": "<!--<script>"})
    '{"name": "\\\\u003c!--\\\\u003cscript\\\\u003e"}'
    """
    text = _json.dumps(obj, **kwargs)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_IN_HTML[m.group()], text)
