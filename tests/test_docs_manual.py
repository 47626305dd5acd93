"""The manual (issue #39 item 3): users' and developers' pages apart, the README and getting-started agree, and the
API reference renders the docstrings' Sphinx roles and fits its tables on the page.

The site is built for real (`mkdocs build --strict`, as `.ci/run` does) into a temporary folder, once for the module,
and looked at in a real browser where one is installed.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import conftest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`")


def _hook():
    """docs/hooks/sphinx_roles.py, imported from its file (it is not part of the package)."""
    spec = importlib.util.spec_from_file_location("sphinx_roles", DOCS / "hooks" / "sphinx_roles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    conftest.require_module("mkdocs", "pip install '.[docs]'")
    conftest.require_module("mkdocstrings", "pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_every_sphinx_role_of_the_api_reference_renders_as_a_link_or_code(site):
    pages = sorted((site / "reference").glob("*/index.html"))
    assert len(pages) == 6
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert not ROLE.search(html), f"{page.parent.name}: a Sphinx role shown literally"
        assert "&lt;autoref" not in html and "<autoref" not in html, page.parent.name
    results = (site / "reference" / "results" / "index.html").read_text(encoding="utf-8")
    # RunResult's `setting : dict` says ":func:`meta_eval.stats.describe`": a link to the Statistics page
    assert 'href="../stats/#meta_eval.stats.describe"><code>meta_eval.stats.describe</code></a>' in results
    # a frozen metric module's docstring (metrics/base.py may not change) renders its roles too
    metrics = (site / "reference" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="#metrics\.base\.[^"]+"><code>', metrics)
    # meta_eval.stats's reST table of the statistics is a table, not a paragraph of "=" rules
    stats = (site / "reference" / "stats" / "index.html").read_text(encoding="utf-8")
    assert "=====" not in stats and re.search(r"<th>statistic</th>\s*<th>paper</th>", stats)
    assert "language pairs::" not in stats and "language pairs:</p>\n<pre><code>pooled accuracy" in stats


def test_the_hook_rewrites_each_role_form():
    rewrite = _hook().rewrite
    link = rewrite("see :class:`~meta_eval.results.RunResult` and :py:func:`meta_eval.stats.point`")
    assert link == ('see <autoref identifier="meta_eval.results.RunResult" optional><code>RunResult</code></autoref>'
                    ' and <autoref identifier="meta_eval.stats.point" optional><code>meta_eval.stats.point</code>'
                    '</autoref>')
    # the repository's folders are rendered under their folder names (meta_eval/_layout.py)
    assert 'identifier="metrics.base.Metric"' in rewrite(":class:`meta_eval.metrics.base.Metric`")
    assert rewrite(":func:`the point <meta_eval.stats.point>`").endswith("<code>the point</code></autoref>")
    # a role wrapped onto the next line, as docstrings at 120 columns do
    assert 'identifier="meta_eval.stats.significance.williams_pvalues"' in rewrite(
        ":func:`meta_eval.stats.significance.\n    williams_pvalues`")
    # no scope to resolve a short name, or Sphinx's "no link": code
    assert rewrite(":meth:`score`") == "<code>score</code>"
    assert rewrite(":class:`!meta_eval.results.RunResult`") == "<code>meta_eval.results.RunResult</code>"
    # a numpydoc type is shown as code: the role becomes the dotted path, which griffe links itself
    doc = "Summary.\n\nAttributes\n----------\nresults : list of :class:`meta_eval.evaluate.VariantResult`\n    Rows."
    assert rewrite(doc).splitlines()[4] == "results : list of meta_eval.evaluate.VariantResult"
    assert rewrite("the formula::\n\n    a = b\n") == "the formula:\n\n    a = b\n"  # a literal block's marker
    # a reST simple table, with a row continued on the next line
    table = "====  =====\nname  meaning\n====  =====\na     one\n      more\nb     :func:`!f`\n====  =====\n"
    assert rewrite(table).strip().splitlines() == ["| name | meaning |", "|---|---|", "| a | one more |",
                                                   "| b | <code>f</code> |"]


def test_no_table_of_the_manual_is_clipped_in_chromium(site):
    from test_leaderboard import _browser

    clipped = {}
    pages = sorted(site.glob("**/index.html"))
    browser = _browser()
    try:
        browser.set_window_size(1400, 1600)  # wide enough for both side bars (Material hides the right one < 1220)
        for page in pages:
            browser.get(page.as_uri())
            clipped[str(page.parent.relative_to(site))] = browser.execute_script(
                "return [...document.querySelectorAll('.md-typeset__scrollwrap')].map(box => "
                "  [box.scrollWidth, box.clientWidth, box.querySelector('td').innerText.slice(0, 40)]"
                ").filter(([scrolled, visible]) => scrolled > visible + 1);")
    finally:
        browser.quit()
    assert len(pages) >= 20 and len([p for p in clipped if p.startswith("reference")]) == 7
    # no table needs a scroll bar: the reference's parameter and attribute tables, the manual's own tables
    assert not any(clipped.values()), {page: tables for page, tables in clipped.items() if tables}


def test_getting_started_repeats_the_readmes_install_lines_and_first_run():
    started = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    install = re.search(r"## Set up\n\n.*?(```bash\n.*?```)", README, re.S).group(1)
    first_run = re.search(r"## The main job\n\n(```bash\n.*?```\n\n```\n.*?```)", README, re.S).group(1)
    assert install in started
    assert first_run in started
    # the torch builds the README names
    for line in ("pip install torch --index-url https://download.pytorch.org/whl/cpu", "`pip install torch`"):
        assert line in README and line in started


def test_users_and_developers_have_their_own_pages():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    users = nav.split("  - Users:\n", 1)[1].split("  - Developers:\n", 1)[0]
    developers = nav.split("  - Developers:\n", 1)[1].split("  - API reference:\n", 1)[0]
    for page in ("install.md", "main-job.md", "reading-output.md", "statistics.md", "imported-scores.md",
                 "plugins.md", "llm-judges.md", "probe.md", "leaderboards.md", "engines.md"):
        assert f": {page}\n" in users, page
    for page in ("design.md", "measurements.md", "caveats.md", "testing.md", "layout.md"):
        assert f": {page}\n" in developers, page
    # getting-started is a short path: the download internals and the measurements moved, not deleted
    started = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert len(started.splitlines()) < 100
    for fact, page in (("SIGKILL", "cache-and-faults.md"), ("umask", "cache-and-faults.md"),
                       ("word pieces/s per core", "design.md"), ("949,448 to 990,932 kB", "measurements.md")):
        assert fact not in started and fact in (DOCS / page).read_text(encoding="utf-8"), fact
