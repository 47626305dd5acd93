"""Output a reader and a paper can use (issue 26): figures, csv / Markdown / LaTeX tables, p-values at the
resolution of the test, two-sided tests, differences to the baseline with intervals, significance clusters in
``run``, a sentence on how to read the table, and no cutting at 80 columns when piped."""
from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app
from meta_eval.report.tables import fmt_p, render_table, run_table
runner = CliRunner()


@pytest.fixture(scope="module")
def system_run(shared_data):
    from meta_eval import run

    return run("chaganty", metrics=["rouge", "chrf"], level="system", resamples=200, data_dir=shared_data,
               no_cache=True, progress=False)


def test_pvalues_print_at_the_tests_resolution():
    """(The guessed two-sided p of a one-sided one, 1 - p + 1/(B+1), is gone: both tails are counted,
    tests/test_categorical_two_sided.py and test_fixed_system_tests.py.)"""
    assert fmt_p(1 / 1001, 1000) == "< 0.001" and fmt_p(0.0005, 1000) == "< 0.001"
    assert fmt_p(0.002, 1000) == "0.002" and fmt_p(3e-9) == "3.0e-09" and fmt_p(None) == "-"
    assert fmt_p(0.0, 99, tails=2) == "< 0.02" and fmt_p(0.03, 99, tails=2) == "0.030"


def test_csv_md_and_latex_hold_the_table(system_run):
    table = run_table(system_run)
    rows = list(csv.reader(io.StringIO(render_table(table, "csv"))))
    assert rows[0] == table.header and len(rows) == len(system_run.results) + 2  # header, variants, ceiling
    assert "95% CI (spearman)" in rows[0] and rows[-1][0] == "human ceiling"
    by_name = {r[0]: r for r in rows[1:]}
    for r in system_run.results:
        assert by_name[r.metric][1] == f"{r.spearman:.3f}"
    md = render_table(table, "md").splitlines()
    assert md[0].startswith("chaganty (sms, n=") and md[1] == ""  # the title, a line of its own
    md = md[2:]
    assert len(md) == len(rows) + 1 and all(line.startswith("| ") for line in md[2:])
    assert md[1].startswith("|:---|---:")
    tex = render_table(table, "latex")
    assert "\\begin{tabular}{l" in tex and "\\toprule" in tex and tex.count("\\\\\n") == len(rows)
    assert "95\\% CI" in tex and "\\midrule\nhuman ceiling" in tex
    with pytest.raises(ValueError, match="--format"):
        render_table(table, "html")


def test_run_formats_from_the_command_line_keep_stdout_for_the_table(shared_data, tmp_path):
    cache = tmp_path / "c.sqlite"
    res = runner.invoke(app, ["run", "-j", "chaganty", "-m", "chrf", "--data-dir", str(shared_data), "--cache",
                              str(cache), "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows[0][:2] == ["metric", "spearman"] and [r[0] for r in rows[1:]] == ["chrf", "human ceiling"]
    assert "reading:" in res.stderr and "human: overall" in res.stderr  # the notes go to stderr
    bad = runner.invoke(app, ["run", "-j", "chaganty", "--format", "xml", "--data-dir", str(shared_data)])
    assert bad.exit_code == 2 and "--format must be one of table, csv, md, latex" in bad.output


def test_the_table_is_not_cut_when_piped_and_says_how_to_read_it(shared_data, tmp_path):
    res = runner.invoke(app, ["run", "-j", "chaganty", "-m", "rouge,chrf", "--level", "system", "--resamples", "100",
                              "--pairwise", "--differences", "--two-sided", "--data-dir", str(shared_data),
                              "--cache", str(tmp_path / "c.sqlite")])
    assert res.exit_code == 0, res.output
    assert "…" not in res.stdout and "rougeLsum-f" in res.stdout  # no 80-column truncation
    header = next(line for line in res.stdout.splitlines() if "metric" in line and "rank" in line)
    assert "95% CI (spearman)" in header and "Δ vs rougeL-f" in header and "(two-sided)" in header
    reading = next(line for line in res.stdout.splitlines() if line.startswith("reading:"))
    assert "agrees best" in reading and "significance cluster" in reading and "human ceiling" in reading
    assert "two-sided" in res.stdout and "is the resolution of 100 resamples" in res.stdout


def test_difference_intervals_and_clusters(system_run):
    diffs = system_run.difference_intervals()
    assert system_run.baseline not in diffs and set(diffs) <= set(system_run.values)
    for v, (lo, hi) in ((v, d) for v, d in diffs.items() if d is not None):
        assert lo <= hi and -2 <= lo and hi <= 2  # a difference of two correlations
    ranks = system_run.clusters(n_resamples=100)
    best = max((v for v in ranks if system_run.values[v] is not None), key=lambda v: system_run.values[v])
    assert ranks[best] == 1 and min(ranks.values()) == 1
    assert all(isinstance(k, int) and k >= 1 for k in ranks.values())


def _svg_texts(path) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text(encoding="utf-8"))


def test_figures_are_labelled_deterministic_and_show_the_ceiling(system_run, tmp_path):
    conftest.require_module("matplotlib", "pip install 'meta-eval[plot]'")
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    ranks = system_run.clusters(n_resamples=100)
    system_run.plot("intervals", first, ranks=ranks)
    system_run.plot("intervals", second, ranks=ranks)
    assert first.read_bytes() == second.read_bytes()  # no date, fixed hash salt
    texts = _svg_texts(first)
    valued = [r.metric for r in system_run.results if r.value is not None]
    for variant in valued:  # one label per metric
        assert sum(t.startswith(variant + " ") or t == variant or t.startswith(variant + "  [") for t in texts) == 1
    assert any("spearman correlation with human 'overall'" in t for t in texts)  # axis label with its unit
    assert any("human ceiling" in t for t in texts)  # the ceiling marker is named
    svg = first.read_text(encoding="utf-8")
    assert 'stroke-dasharray' in svg and "Date" not in svg
    heat = tmp_path / "p.svg"
    system_run.plot("pvalues", heat, ranks=ranks)
    heat_texts = _svg_texts(heat)
    assert sum(t in valued for t in heat_texts) == 2 * len(system_run.pvalue_matrix().variants)  # rows and columns
    assert any(t.startswith("one-sided p") for t in heat_texts)
    scatter = tmp_path / "s.pdf"
    system_run.plot("scatter", scatter, variant="chrf")
    data = scatter.read_bytes()
    assert data.startswith(b"%PDF") and b"CreationDate" not in data
    png = tmp_path / "i.png"
    system_run.plot("intervals", png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="written as"):
        system_run.plot("intervals", tmp_path / "x.jpg")


def test_plot_option_of_run(shared_data, tmp_path):
    conftest.require_module("matplotlib", "pip install 'meta-eval[plot]'")
    out = tmp_path / "fig.svg"
    res = runner.invoke(app, ["run", "-j", "chaganty", "-m", "chrf,rouge", "--data-dir", str(shared_data),
                              "--cache", str(tmp_path / "c.sqlite"), "--plot", str(out), "--plot",
                              f"scatter=chrf:{tmp_path / 'sc.svg'}"])
    assert res.exit_code == 0, res.output
    assert out.is_file() and (tmp_path / "sc.svg").is_file()
    assert any("chrf (rows)" in t for t in _svg_texts(tmp_path / "sc.svg"))
    bad = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plot", "fig.jpg"])
    assert bad.exit_code == 2 and "a figure is written as .png, .svg or .pdf" in bad.output


def test_json_unchanged_by_the_new_options(system_run, shared_data, tmp_path):
    """--format changes what is printed, not the results document; --two-sided changes only the p-values against
    the baseline the stars read (each result's p_adjusted_vs_baseline, two-sided, and p_vs_baseline_two_sided), so
    that the JSON says what the table shows."""
    out, two = tmp_path / "r.json", tmp_path / "two.json"
    for path, extra in ((out, []), (two, ["--two-sided"])):
        res = runner.invoke(app, ["run", "-j", "chaganty", "-m", "rouge,chrf", "--level", "system", "--resamples",
                                  "200", "--format", "md", *extra, "--data-dir", str(shared_data), "--no-cache",
                                  "--output", str(path)])
        assert res.exit_code == 0, res.output
    doc, sides = json.loads(out.read_text()), json.loads(two.read_text())
    mine = system_run.to_dict()
    for key in ("results", "ceiling", "level_warning", "resampling"):
        assert doc[key] == mine[key]
    assert np.isfinite([r["value"] for r in doc["results"] if r["value"] is not None]).all()
    assert (doc["multiple_comparisons"]["sides"], sides["multiple_comparisons"]["sides"]) == ("one-sided", "two-sided")
    moved = {"p_adjusted_vs_baseline", "p_vs_baseline_two_sided"}
    assert [{k: v for k, v in r.items() if k not in moved} for r in sides["results"]] == \
        [{k: v for k, v in r.items() if k not in moved} for r in doc["results"]]
    assert all("p_vs_baseline_two_sided" in r and "p_vs_baseline_two_sided" not in d
               for r, d in zip(sides["results"], doc["results"]))


def test_help_names_every_built_in_set():
    from meta_eval import cli, judgments

    for name in judgments.BUILTIN:
        assert name in cli._SETS_HELP
    res = runner.invoke(app, ["run", "--help"])
    assert res.exit_code == 0 and "qags" in " ".join(res.output.split())


def test_the_set_and_protocol_listings_read_at_80_columns(shared_data):
    """No wide tables squeezed into a terminal: one block per set or protocol, every line a 'key: value' or a
    heading, and the blocks hold what the tables held (size, dimensions, licence, source; parts, citation)."""
    from meta_eval.judgments import BUILTIN
    from meta_eval.judgments.catalog import catalog

    entries = catalog(shared_data)
    assert [e["name"] for e in entries] == list(BUILTIN) and not any(e["problems"] for e in entries)
    assert not next(e for e in entries if e["name"] == "judge-bench")["missing"]  # its 13 files are all found
    qags = next(e for e in entries if e["name"] == "qags")
    assert qags["subset"] == "cnndm" and qags["rows"] == 235 and qags["subsets"] == ("all", "cnndm", "xsum")
    res = runner.invoke(app, ["judgments", "--data-dir", str(shared_data)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "┃" not in res.output and "│" not in res.output  # no table
    for e in entries:
        assert f"{e['name']} (" in res.output and f"{e['rows']} rows" in res.output
        for s in e.get("sets", ()):  # judge-bench: one line per file
            assert f"{s['name']} (" in res.output and f"{s['rows']} rows" in res.output
    assert "licence: MIT (arunchaganty/active-evaluation)" in res.output
    res = runner.invoke(app, ["protocols"], env={"COLUMNS": "80"})
    assert res.exit_code == 0 and "┃" not in res.output and "sms-2019:" in res.output
