"""Every output escaped for its format (issue 36, item 6): names from data files, score files, plugins and ``--title``
reach LaTeX, Markdown, HTML and the terminal as literal text (:mod:`meta_eval.report.escape`).

- ``run --format latex``: a dimension name with a line break and ``\\input{/etc/passwd}`` cannot start a command.
- ``leaderboard publish``: ``<!--<script>`` in a dimension, system, document id or score name leaves the page's
  script intact (the embedded JSON holds no ``<``) and reads back the same names; ``--title`` and names reach the
  README.md and the index's README.md as text, not HTML or Markdown; a ``#`` or a space in a set's file or a
  board's folder is percent-encoded in the pages' links and image sources (figures, heatmaps, the index's links).
- the terminal: ESC (``\\x1b[2J`` clears the screen), a carriage return or a line break in a system, document or
  dimension name prints as an escape, in ``run`` and ``meta-eval judgments``.
- property tests: each escape function's output holds no sequence its format could read, for any text.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from meta_eval.cli import app
from meta_eval.report import escape

runner = CliRunner()

INJECT = "q\n\\input{/etc/passwd}"
HTML_EVIL = "<!--<script>"
CLEAR = "\x1b[2J"


def _write_set(path: Path, *, dimension: str = "quality", system: str = "s", doc: str = "d") -> Path:
    """Four documents, three systems each: every level (global, summary, system) can be computed."""
    words = "the cabinet approved a new budget on tuesday after long talks in the north".split()
    with open(path, "w", encoding="utf-8") as fh:
        for d in range(4):
            for s in range(3):
                i = 3 * d + s
                fh.write(json.dumps({"id": f"r{i}", "doc_id": f"{doc}{d}", "system": f"{system}{s}",
                                     "candidate": " ".join(words[i % 5: i % 5 + 3 + s]),
                                     "references": [" ".join(words[d: d + 6])],
                                     "scores": {dimension: float((i * 7) % 5)}}) + "\n")
    return path


# -- LaTeX ------------------------------------------------------------------------------------------------------------

def test_latex_table_cannot_run_a_command_from_a_dimension_name(tmp_path):
    data = _write_set(tmp_path / "mine.jsonl", dimension=INJECT)
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--resamples", "10",
                              "--format", "latex"])
    assert res.exit_code == 0, res.output
    tex = res.stdout
    assert "\\begin{tabular}" in tex and "\\end{tabular}" in tex
    # the name's backslash is text; no line starts a command other than the table's own
    assert re.search(r"(?<!textbackslash\{\})\\input", tex) is None, tex
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in tex
    own = ("\\begin{tabular}", "\\toprule", "\\midrule", "\\bottomrule", "\\end{tabular}")
    for line in tex.splitlines():
        assert not line.startswith("\\") or line.startswith(own), line


def test_latex_row_name_starting_with_a_bracket_is_not_the_line_breaks_argument(tmp_path):
    """A row first in its line after ``\\\\`` (or ``\\midrule``) that starts with ``[`` was read as the break's
    optional length (``\\\\[x]``), one starting with ``*`` as its star: the leading character is braced."""
    data = _write_set(tmp_path / "mine.jsonl")
    scores = tmp_path / "s.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": float(i % 4)}) + "\n" for i in range(12)),
                      encoding="utf-8")
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "chrf", "--no-cache", "--format", "latex",
                              "--scores", f"[x]={scores}", "--scores", f" *y={scores}"])
    assert res.exit_code == 0, res.output
    rows = res.stdout.splitlines()
    assert not [line for line in rows if line.lstrip().startswith(("[", "*"))], res.stdout
    assert any(line.startswith("{[}x] & ") for line in rows) and any(line.startswith("{*}y & ") for line in rows)
    assert any(line.startswith("chrf & ") and " & [" in line for line in rows)  # other cells as before
    assert escape.latex_row(["rouge1-f", "[0.1, 0.2]"]) == "rouge1-f & [0.1, 0.2] \\\\"


# -- HTML and Markdown of a published board ------------------------------------------------------------------------

class _Scripts(HTMLParser):
    """The page's elements as a browser's tokenizer sees the script elements: their text and what follows."""

    def __init__(self):
        super().__init__()
        self.scripts, self._in = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._in = {"attrs": dict(attrs), "text": ""}

    def handle_data(self, data):
        if self._in is not None:
            self._in["text"] += data

    def handle_endtag(self, tag):
        if tag == "script" and self._in is not None:
            self.scripts.append(self._in)
            self._in = None


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A board published from a set whose dimension, systems and documents are named ``<!--<script>...``, with a
    hostile --title, and the index of its folder."""
    tmp = tmp_path_factory.mktemp("board")
    data = _write_set(tmp / "mine.jsonl", dimension=f"{HTML_EVIL}q", system=f"{HTML_EVIL}s", doc=f"{HTML_EVIL}d")
    title = "<img src=x onerror=1> | *bold* [x](http://e.test) `code`"
    res = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "10",
                              "--no-cache", "--out", str(tmp / "root" / "mine"), "--title", title])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["leaderboard", "index", "--root", str(tmp / "root")])
    assert res.exit_code == 0, res.output
    return {"folder": tmp / "root" / "mine", "root": tmp / "root", "title": title}


def test_hostile_names_cannot_break_the_pages_script(board):
    page = (board["folder"] / "index.html").read_text(encoding="utf-8")
    parser = _Scripts()
    parser.feed(page)
    data = [s for s in parser.scripts if s["attrs"].get("id") == "data"]
    assert len(data) == 1 and len(parser.scripts) == 2  # the data and the page's code, both closed where they end
    text = data[0]["text"]
    assert "<!--" not in text and "<script" not in text.lower() and "<" not in text
    doc = json.loads(text)
    results = json.loads((board["folder"] / "results.json").read_text(encoding="utf-8"))
    assert doc["sets"][0]["human"] == results["sets"][0]["human"] == f"{HTML_EVIL}q"  # the names read back the same
    assert doc["title"] == board["title"]
    assert "const doc = JSON.parse" in parser.scripts[1]["text"]  # the code is still a script, not swallowed
    assert "<img" not in page.split('<script id="data"', 1)[0]  # the title is text in <title> and <h1>


def _unescaped_html(markdown: str) -> list[str]:
    """The lines of ``markdown`` holding a ``<`` that is neither backslash-escaped nor inside a code span."""
    return [line for line in markdown.splitlines() if re.search(r"(?<!\\)<", re.sub(r"(`+).*?\1", "", line))]


def test_board_and_index_readme_show_title_and_names_as_text(board):
    readme = (board["folder"] / "README.md").read_text(encoding="utf-8")
    first = readme.splitlines()[0]
    assert first == ("# Leaderboard: \\<img src=x onerror=1\\> \\| \\*bold\\* \\[x\\](http://e.test) "
                     "\\`code\\`")
    assert _unescaped_html(readme) == []
    assert f"## mine (all): human `{HTML_EVIL}q`" in readme  # a code span shows it verbatim
    index = (board["root"] / "README.md").read_text(encoding="utf-8")
    marker = [line for line in index.splitlines() if line.startswith("<!-- generated by")]
    assert len(marker) == 1 and _unescaped_html(index) == marker  # the index's own marker only
    assert "| \\<!--\\<script\\>q |" in index


def _board_with_a_score_named(tmp_path, name: str) -> tuple[Path, Path]:
    """A board in ``tmp_path/b`` of :func:`_write_set` with rouge and an imported score ``name``; the set and the
    score file."""
    data = _write_set(tmp_path / "mine.jsonl")
    scores = tmp_path / "s.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": float(i % 4)}) + "\n" for i in range(12)),
                      encoding="utf-8")
    res = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "10",
                              "--no-cache", "--out", str(tmp_path / "b"), "--scores", f"{name}={scores}"])
    assert res.exit_code == 0, res.output
    return data, scores


def test_a_score_name_cannot_break_the_page(tmp_path):
    _board_with_a_score_named(tmp_path, f"{HTML_EVIL}x")
    page = (tmp_path / "b" / "index.html").read_text(encoding="utf-8")
    parser = _Scripts()
    parser.feed(page)
    text = next(s["text"] for s in parser.scripts if s["attrs"].get("id") == "data")
    assert "<" not in text and len(parser.scripts) == 2
    assert any(r["variant"] == f"{HTML_EVIL}x" for b in json.loads(text)["sets"][0]["levels"] for r in b["results"])
    readme = (tmp_path / "b" / "README.md").read_text(encoding="utf-8")
    assert _unescaped_html(readme) == [] and "| \\<!--\\<script\\>x |" in readme


@pytest.fixture(scope="module")
def hashed(tmp_path_factory):
    """A board in a folder ``b#1 x`` published from a set file ``q#1.jsonl``, probed, and the index of its root:
    a ``#`` in a link read as a fragment, a space ended it."""
    pytest.importorskip("matplotlib")  # the board's figures and the heatmap
    tmp = tmp_path_factory.mktemp("hashed")
    data, board = _write_set(tmp / "q#1.jsonl"), tmp / "root" / "b#1 x"
    for args in (["leaderboard", "publish", "-j", str(data), "-m", "bleu", "--resamples", "10", "--no-cache",
                  "--out", str(board)],
                 ["leaderboard", "probe", str(board), "-j", str(data), "-p", "casing", "--resamples", "20",
                  "--no-cache"],
                 ["leaderboard", "index", "--root", str(tmp / "root")]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
    return board


def test_file_and_folder_names_are_percent_encoded_in_the_pages_links(hashed):
    page = (hashed / "index.html").read_text(encoding="utf-8")
    assert '<img src="figures/blindspots-q%231-all.png"' in page  # the board's heatmap
    index = (hashed.parent / "index.html").read_text(encoding="utf-8")
    assert 'href="b%231%20x/index.html"' in index
    for text in (page, index):
        assert [u for u in re.findall(r'(?:href|src)="([^"$]*)"', text) if set(u) & set("# ")] == []
    # the page's script encodes each segment of a figure's path (encodeURIComponent) before escaping it
    assert 'function url(path){ return esc(String(path).split("/").map(encodeURIComponent).join("/")); }' in page
    assert '<a href="${url(block.figure)}">' in page and 'src="${url(block.figure)}"' in page


def test_a_figure_named_with_a_hash_loads_in_chromium(hashed):
    from selenium.webdriver.common.by import By
    from test_leaderboard import _browser

    driver = _browser()
    try:
        driver.get((hashed / "index.html").resolve().as_uri())
        figure = driver.find_element(By.CSS_SELECTOR, "#figure img")
        assert figure.get_attribute("src").endswith("/b%231%20x/figures/q%231-all-summary-spearman.svg")
        heatmap = driver.find_element(By.CSS_SELECTOR, "img[alt='blind spots heatmap']")
        for img in (figure, heatmap):
            assert driver.execute_script("return arguments[0].naturalWidth", img) > 100  # it loaded
        driver.get((hashed.parent / "index.html").resolve().as_uri())
        driver.get(driver.find_element(By.CSS_SELECTOR, "#index a").get_attribute("href"))
        assert driver.title.startswith("meta-eval leaderboard: ")  # the board's page, not a missing file
    finally:
        driver.quit()


# -- the terminal ---------------------------------------------------------------------------------------------------

def test_control_characters_from_the_data_print_as_escapes(tmp_path):
    data = _write_set(tmp_path / "mine.jsonl", dimension=f"q{CLEAR}\rx", system=f"s{CLEAR}", doc=f"d{CLEAR}")
    for args in (["judgments", str(data)],
                 ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--resamples", "10"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        both = res.stdout + res.stderr
        assert "\x1b" not in both and "\r" not in both, args
        assert "q\\x1b[2J\\x0dx" in both, args  # the dimension, in the table's title or the judgments lines
    with open(data, "a", encoding="utf-8") as fh:  # a repeated (document, system) pair: named by document
        fh.write(json.dumps({"id": "r99", "doc_id": f"d{CLEAR}0", "system": f"s{CLEAR}0", "candidate": "a b",
                             "references": ["a b c"], "scores": {f"q{CLEAR}\rx": 1.0}}) + "\n")
    res = runner.invoke(app, ["judgments", str(data)])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stdout and "s\\x1b[2J0, s\\x1b[2J1, s\\x1b[2J2" in res.stdout  # the systems
    assert "d\\x1b[2J0" in res.stdout  # the document of the repeated pair


def test_a_line_break_in_a_name_stays_on_its_line(tmp_path):
    data = _write_set(tmp_path / "mine.jsonl", dimension="q\nfake: line")
    res = runner.invoke(app, ["judgments", str(data)])
    assert res.exit_code == 0, res.output
    assert "q\\x0afake: line" in res.stdout
    assert not any(line.startswith("fake: line") for line in res.stdout.splitlines())


# -- properties of the escape functions -----------------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.text("\\{}$&#^_%~<>|`*[]!\n\r\x1b\u2028 abc-;",
                                                                       max_size=40)
_LATEX_ESCAPES = re.compile(r"\\textbackslash\{\}|\\textasciitilde\{\}|\\textasciicircum\{\}|\\textbar\{\}|"
                            r"\\[&%_#${}]|\$<\$|\$>\$|\$\\Delta\$|\$\\tau\$")


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_latex_output_holds_only_its_own_escapes(text):
    out = escape.latex(text)
    rest = _LATEX_ESCAPES.sub("", out)
    assert not set(rest) & set("\\{}$&#^_%~<>|"), (text, out)
    assert not escape.CONTROL.search(out) and "\n" not in out


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_markdown_output_is_literal_text_on_one_line(text):
    out = escape.markdown(text)
    assert not escape.CONTROL.search(out)
    rest = re.sub(r"\\[\\`*_\[\]<>|#~&$]", "", out)
    assert not set(rest) & set("\\`*_[]<>|#~$"), (text, out)
    unescaped = re.sub(r"\\.", " ", out)  # no entity outside the escapes: &lt; shows as written
    assert not re.search("&#?[0-9A-Za-z]+;", unescaped), (text, out)
    # unescaped, it is the text with white space runs as one space and control characters shown
    assert re.sub(r"\\(.)", r"\1", out) == escape.terminal(" ".join(text.split()))


@pytest.mark.parametrize("name", ["x&amp;", "&lt;script&gt;", "&#60;b&#x3E;", "a & b", "Foster & Freitag", "$x$ 5$"])
def test_markdown_shows_entities_as_written(name):
    """An ``&`` starting an entity (``&amp;``, ``&#60;``) is escaped, so CommonMark shows the name as written (it
    read ``x&amp;`` as ``x&`` and ``&lt;script&gt;`` as ``<script>``); any other ``&`` is left as it was."""
    from markdown_it import MarkdownIt

    shown = MarkdownIt("commonmark").renderInline(escape.markdown(name))
    assert shown == name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert ";" in name or "$" in name or escape.markdown(name) == name  # an ordinary "&" as before
    assert "$" not in name or escape.markdown(name) == name.replace("$", "\\$")  # GitHub reads $x$ as math


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_markdown_code_span_cannot_end_early(text):
    out = escape.markdown_code(text, in_table=True)
    fence = re.match("`+", out).group()
    inner = out[len(fence):-len(fence)]
    assert out.endswith(fence) and inner  # a code span ends at the first run of exactly its fence's length
    assert all(len(run) != len(fence) for run in re.findall("`+", inner))
    assert not escape.CONTROL.search(out) and "|" not in inner.replace("\\|", "")


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_html_and_terminal_outputs(text):
    page = escape.html(text)
    assert not set(page) & set("<>\"'") and re.sub(r"&(amp|lt|gt|quot|#x27);", "", page).count("&") == 0
    shown = escape.terminal(text)
    assert not escape.CONTROL.search(shown)
    assert escape.CONTROL.sub("", escape.terminal(text, keep="\n")) == escape.terminal(text, keep="\n").replace(
        "\n", "")


JSON = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(JSON)
def test_json_in_html_reads_back_and_holds_no_markup(obj):
    out = escape.json_in_html(obj)
    assert not set(out) & set("<>&\u2028\u2029")
    assert json.loads(out) == obj


def test_the_escape_module_doctests():
    import doctest

    result = doctest.testmod(escape)
    assert result.attempted >= 5 and result.failed == 0


# -- figures ----------------------------------------------------------------------------------------------------------

def test_a_name_with_dollars_is_drawn_as_text_not_tex(tmp_path):
    """matplotlib reads text between two ``$`` as mathtext: a score name like ``a$\\frac$b`` failed the figure
    after all the scoring; with ``text.parse_math`` off it is drawn as the characters it is."""
    pytest.importorskip("matplotlib")
    data = _write_set(tmp_path / "mine.jsonl")
    scores = tmp_path / "s.jsonl"
    scores.write_text("".join(json.dumps({"id": f"r{i}", "score": float(i % 4)}) + "\n" for i in range(12)),
                      encoding="utf-8")
    name = "a$\\frac$b"
    figure = tmp_path / "f.svg"
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--no-cache", "--resamples", "10",
                              "--scores", f"{name}={scores}", "--plot", str(figure), "--level", "summary"])
    assert res.exit_code == 0, res.output
    assert name in figure.read_text(encoding="utf-8")  # svg.fonttype none: the label's characters are in the file


def test_paths_and_plugin_names_print_as_written_not_as_rich_markup(tmp_path):
    """``--out 'bd[blink]X'`` printed "wrote .../bdX" (the tag eaten, a link or blink on a colour terminal); the
    index's table title and a plugin's metric name in ``meta-eval metrics`` the same."""
    data = _write_set(tmp_path / "mine.jsonl")
    root = tmp_path / "idx[b]R"
    res = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "10",
                              "--no-cache", "--out", str(root / "bd[blink]X")])
    assert res.exit_code == 0, res.output
    assert f"wrote {root}/bd[blink]X/results.json" in res.output
    res = runner.invoke(app, ["leaderboard", "index", "--root", str(root)])
    assert res.exit_code == 0 and "idx[b]R" in res.output, res.output
    plugin = tmp_path / "p.py"
    plugin.write_text("from meta_eval.metrics import Metric, register\n\n\n@register('[b]e')\nclass E(Metric):\n"
                      "    variants = ('e',)\n\n    def _score(self, examples):\n"
                      "        return {'e': [1.0 for _ in examples]}\n", encoding="utf-8")
    res = runner.invoke(app, ["metrics", "--plugin", str(plugin)])
    assert res.exit_code == 0 and "│ [b]e " in res.output, res.output


def test_a_name_in_results_json_cannot_put_a_figure_outside_the_board(tmp_path):
    """A set named ``../../victim/x`` in a board's results.json made ``leaderboard render`` write
    ``victim/x-all-global-spearman.svg`` beside the board: a path separator in a name is written ``_``."""
    pytest.importorskip("matplotlib")
    data = _write_set(tmp_path / "mine.jsonl")
    board = tmp_path / "root" / "b"
    res = runner.invoke(app, ["leaderboard", "publish", "-j", str(data), "-m", "rouge", "--resamples", "10",
                              "--no-cache", "--out", str(board)])
    assert res.exit_code == 0, res.output
    doc = json.loads((board / "results.json").read_text(encoding="utf-8"))
    for s in doc["sets"]:
        s["judgments"] = "../../victim/x"
    (board / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "victim").mkdir()
    res = runner.invoke(app, ["leaderboard", "render", str(board)])
    assert res.exit_code == 0, res.output
    assert list((tmp_path / "victim").iterdir()) == [] and not list(tmp_path.glob("root/*.svg"))
    made = sorted(p.name for p in (board / "figures").glob(".._.._victim_x-*.svg"))
    assert made and all("/" not in m for m in made)
    assert "figures/.._.._victim_x-all-" in (board / "README.md").read_text(encoding="utf-8")


def test_a_control_character_in_a_name_leaves_the_figures_valid_svg(tmp_path):
    """An imported score named with a raw ESC reached the board's SVG figures as a raw 0x1b byte: not XML, which a
    browser refuses to show; it is written as the escape \\x1b, as on the terminal. ``run --plot`` the same."""
    pytest.importorskip("matplotlib")
    from xml.dom import minidom

    data, scores = _board_with_a_score_named(tmp_path, f"e{CLEAR}x")
    plot = tmp_path / "run.svg"
    res = runner.invoke(app, ["run", "-j", str(data), "-m", "rouge", "--resamples", "10", "--no-cache",
                              "--scores", f"e{CLEAR}x={scores}", "--plot", f"intervals:{plot}"])
    assert res.exit_code == 0, res.output
    svgs = sorted((tmp_path / "b" / "figures").glob("*.svg")) + [plot]
    assert len(svgs) > 1
    for svg in svgs:
        raw = svg.read_bytes()
        assert b"\x1b" not in raw, svg
        minidom.parseString(raw)  # well-formed XML
    assert b"\\x1b[2J" in svgs[0].read_bytes() and b"\\x1b[2J" in plot.read_bytes()  # the name, shown
