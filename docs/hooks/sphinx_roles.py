"""A griffe extension that renders the Sphinx roles of meta-eval's docstrings in the API reference.

The docstrings are numpydoc and name other objects the Sphinx way (``:class:`VariantResult```,
``:func:`~meta_eval.stats.point```, ``:mod:`metrics.base```). mkdocstrings renders docstrings as Markdown, where a
role is shown literally. This extension rewrites every role, in every docstring griffe loads for the reference (the
frozen metric modules' included, whose files must not change), before mkdocstrings renders it:

- a role whose target resolves (a dotted path as written, or a name looked up in the docstring's own scope: the
  object, its class, its module and that module's imports) becomes an *optional* mkdocs-autorefs cross-reference: a
  link when the target is rendered somewhere in the reference, else the name in code with the full path as its
  tooltip (autorefs' rule for optional references: no warning, so ``mkdocs build --strict`` stays quiet);
- a role whose target does not resolve becomes the name in code.

A reST literal block's ``text::`` reads ``text:``, as reST shows it. A reST "simple table" (columns under rules of
``=``) becomes a Markdown table, which mkdocstrings renders; reST
shows it as a table too, Markdown would run it into one paragraph.

Sphinx's spellings are kept: ``~a.b.C`` shows ``C``, ``title <a.b.C>`` shows ``title``, a leading ``.`` is a name
looked up in scope, ``!name`` is never a link. Paths under ``meta_eval.metrics``, ``meta_eval.judgments`` and
``meta_eval.leaderboard`` are the reference's ``metrics.*``, ``judgments.*`` and ``leaderboard.*`` (the reference
is generated from the repository's folders; ``meta_eval/_layout.py``).

Enabled in ``mkdocs.yml`` (``plugins: mkdocstrings: handlers: python: options: extensions``). Tested by
``tests/test_docs_manual.py``.
"""
from __future__ import annotations

import html
import re
from typing import Any

try:  # griffe >= 1 (griffelib 2.x keeps the same public names)
    from griffe import Extension, Object
except ImportError:  # pragma: no cover - only without the docs extra
    Extension, Object = object, Any  # type: ignore[assignment,misc]

ROLES = ("class", "func", "meth", "mod", "attr", "data", "exc", "obj", "const", "type")
# :role:`target`, :py:role:`target`, with Sphinx's prefixes ~ (last part shown) and ! (no link), and `title <target>`
ROLE_RE = re.compile(r":(?:py:)?(?P<role>" + "|".join(ROLES) + r"):`(?P<body>[^`]+)`")
# numpydoc sections whose items are "name : type" lines (or a bare type): their types are rendered as code
TYPED_SECTIONS = ("parameters", "other parameters", "returns", "yields", "receives", "raises", "warns", "attributes")
MAPPED = ("metrics", "judgments", "leaderboard")  # meta_eval.<name> is rendered from the folder <name>/


def _reference_path(path: str) -> str:
    """The identifier under which the reference renders ``path`` (``meta_eval.metrics.x`` -> ``metrics.x``)."""
    for name in MAPPED:
        if path == f"meta_eval.{name}" or path.startswith(f"meta_eval.{name}."):
            return path[len("meta_eval."):]
    return path


def _resolve(obj: Any, target: str) -> str | None:
    """The full dotted path of ``target`` as seen from ``obj``'s docstring, or None when it does not resolve."""
    target = target.lstrip(".")
    first, _, rest = target.partition(".")
    scope = obj
    while scope is not None:
        try:
            found = scope.resolve(first)
        except Exception:  # griffe's NameResolutionError, or an alias it cannot follow
            found = None
        if found:
            return _reference_path(f"{found}.{rest}" if rest else found)
        scope = scope.parent
    if first in ("meta_eval", *MAPPED):  # written in full: taken as written
        return _reference_path(target)
    return None


RULE_RE = re.compile(r"^( *)(=+(?: +=+)+) *$")  # a simple table's rule: runs of "=" separated by spaces


def simple_tables(text: str) -> str:
    """Turn each reST simple table of ``text`` into a Markdown table (one header row; a row whose first cell is
    empty continues the row above it, as in reST)."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        rule = RULE_RE.match(lines[i])
        # a table: rule, header row(s), rule, body rows, rule
        ends = [j for j in range(i + 1, len(lines)) if lines[j].strip() == lines[i].strip()][:2] if rule else []
        if len(ends) < 2:
            out.append(lines[i])
            i += 1
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[i])]

        def cells(line: str) -> list[str]:
            bounds = [start for start, _ in spans[1:]] + [None]
            return [line[start:end].strip() for (start, _), end in zip(spans, bounds)]

        header = [cells(line) for line in lines[i + 1:ends[0]] if line.strip()]
        rows: list[list[str]] = []
        for line in lines[ends[0] + 1:ends[1]]:
            if not line.strip():
                continue
            row = cells(line)
            if rows and not row[0]:
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row)]
            else:
                rows.append(row)
        head = [" ".join(c for c in col if c) for col in zip(*header)] if header else [""] * len(spans)
        out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(spans)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        out.append("")
        i = ends[1] + 1
    return "\n".join(out)


def rewrite(text: str, obj: Any = None) -> str:
    """Rewrite the Sphinx roles of one docstring into autorefs cross-references or code.

    Parameters
    ----------
    text : str
        The docstring's text.
    obj : griffe.Object, optional
        The object the docstring belongs to, whose scope resolves short names; without it only full dotted paths
        (``meta_eval.…``, ``metrics.…``) become cross-references.

    Returns
    -------
    str
        The text with each role replaced.
    """
    def one(match: re.Match[str]) -> str:
        body = match["body"].strip()  # a role may wrap onto the next line: a path never holds white space
        titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", body, flags=re.S)
        if titled:
            title, target = " ".join(titled["title"].split()), re.sub(r"\s+", "", titled["target"])
        else:
            target = body = re.sub(r"\s+", "", body)
            title = body.lstrip("~!").lstrip(".")
            if body.startswith("~"):
                title = title.rsplit(".", 1)[-1]
        no_link = target.startswith("!")
        target = target.lstrip("~!")
        code = f"<code>{html.escape(title)}</code>"
        if no_link:
            return code
        path = _resolve(obj, target) if obj is not None else (
            _reference_path(target) if target.split(".", 1)[0] in ("meta_eval", *MAPPED) else None)
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path, quote=True)}" optional>{code}</autoref>'

    def plain(match: re.Match[str]) -> str:  # in a type: the dotted path, which griffe parses and links itself
        body = match["body"].strip()
        titled = re.fullmatch(r".+?\s*<(?P<target>[^<>]+)>", body, flags=re.S)
        target = (titled["target"] if titled else body).strip().lstrip("~!")
        path = _resolve(obj, target) if obj is not None else None
        return path or target.lstrip(".")

    text = simple_tables(text)
    # reST's literal-block marker: "text::" before an indented block reads "text:" (Markdown shows the block as code)
    text = re.sub(r"(?<=\S)::(?=\n[ \t]*\n[ \t]+\S)", ":", text)
    lines, out, section_indent = text.split("\n"), [], None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"\s*-{3,}\s*", nxt):  # a numpydoc section header
            typed = line.strip().lower() in TYPED_SECTIONS
            section_indent = indent if typed else None
        elif re.fullmatch(r"\s*-{3,}\s*", line):
            pass
        elif section_indent is not None and line.strip() and indent == section_indent:
            # an item line of a section ("name : type", or a bare type under Returns/Raises): types are shown as
            # code, where HTML would show literally
            head, sep, typ = line.partition(" : ")
            line = head + sep + ROLE_RE.sub(plain, typ) if sep else ROLE_RE.sub(plain, line)
        out.append(line)
    return ROLE_RE.sub(one, "\n".join(out))


def _walk(obj: Any, seen: set[int]) -> None:
    if id(obj) in seen or getattr(obj, "is_alias", False):
        return
    seen.add(id(obj))
    if obj.docstring is not None and (":" in obj.docstring.value or "==" in obj.docstring.value):
        obj.docstring.value = rewrite(obj.docstring.value, obj)
    for member in list(obj.members.values()):
        _walk(member, seen)


class SphinxRoles(Extension):
    """Rewrite the Sphinx roles of a package's docstrings once the whole package is loaded (names then resolve)."""

    def on_package(self, *, pkg: Object, **kwargs: Any) -> None:  # griffe >= 1.x hook
        _walk(pkg, set())
