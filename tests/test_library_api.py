"""The whole job as a Python library (issue 25): ``from meta_eval import run`` gives the command line's numbers, its
JSON and a DataFrame; ``learn``, ``score`` and ``publish`` likewise; errors are exceptions carrying the CLI's message
and exit code; ``cli.py`` is a thin shell over them.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
VOLATILE = ("written_by", "wall_seconds", "timing", "shared_timing", "learn_seconds", "generated", "created")
# the provenance's command: the command line records it, a library call records null (meta_eval/provenance.py)
VOLATILE += ("command",)


def _stable(doc):
    if isinstance(doc, dict):
        return {k: _stable(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [_stable(v) for v in doc]
    return doc


def _cli(*args) -> None:
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output


def test_run_gives_the_cli_numbers_json_and_a_frame(shared_data, tmp_path):
    from meta_eval import run

    cache = tmp_path / "c.sqlite"
    out = tmp_path / "cli.json"
    _cli("run", "-j", "chaganty", "-m", "rouge,chrf", "--level", "system", "--resamples", "100", "--data-dir",
         shared_data, "--cache", cache, "--output", out)
    res = run("chaganty", metrics=["rouge", "chrf"], level="system", resamples=100, data_dir=shared_data,
              cache=cache, progress=False)
    cli_doc = json.loads(out.read_text())
    assert _stable(res.to_dict()) == _stable(cli_doc)
    frame = res.to_frame()
    assert list(frame.index) == [r["metric"] for r in cli_doc["results"]]
    for r in cli_doc["results"]:
        row = frame.loc[r["metric"]]
        assert row["value"] == r["value"] and [row["ci_low"], row["ci_high"]] == r["ci"]
        p = row["p_vs_baseline"]
        assert (p is None or np.isnan(p)) if r["perm_p_vs_baseline"] is None else p == r["perm_p_vs_baseline"]
    assert res.values["chrf"] == frame.loc["chrf", "value"] and res.baseline == "rougeL-f"
    assert set(res.signatures.values()) == {r["signature"] for r in cli_doc["results"]}
    assert res.level_warning == cli_doc["level_warning"] and "4 systems" in res.level_warning
    assert res.ceiling.value == cli_doc["ceiling"]["value"] and res.complete


def test_the_global_level_with_williams_and_the_pvalue_matrix(shared_data, tmp_path):
    from meta_eval import run

    res = run("chaganty", metrics="rouge,chrf", data_dir=shared_data, no_cache=True, progress=False)
    # the global level has its BOOT-BOTH interval too (issue 35: it was None); the test stays Williams's
    lo, hi = res.intervals["chrf"]
    assert res.setting["test"] == "williams" and lo < res.values["chrf"] < hi
    assert res.pvalues_vs_baseline["rougeL-f"] is None and 0 <= res.pvalues_vs_baseline["chrf"] <= 1
    matrix = res.pvalue_matrix(n_resamples=60, seed=1)
    k = len(matrix.variants)
    # one test per (statistic, level): the table's Williams test also in the matrix (issue 35; was perm-both), equal
    # to the table's p-values against the baseline exactly
    assert matrix.p.shape == (k, k) and np.isnan(np.diag(matrix.p)).all() and matrix.test == "williams"
    base = matrix.variants.index("rougeL-f")
    assert all(matrix.p[i, base] == res.pvalues_vs_baseline[v] for i, v in enumerate(matrix.variants) if i != base)
    off = ~np.eye(k, dtype=bool)
    assert ((matrix.p[off] >= 0) & (matrix.p[off] <= 1)).all()
    # one-sided tests of i over j and j over i: with B resamples their p-values add to about 1 (+1/(B+1) each)
    assert np.allclose(matrix.p[off] + matrix.p.T[off], 1, atol=0.1)
    assert list(matrix.to_frame().index) == matrix.variants


def test_errors_are_exceptions_with_the_cli_message_and_code(shared_data, tmp_path):
    from meta_eval import MetaEvalError, run

    with pytest.raises(MetaEvalError) as caught:
        run("chaganty", metrics=["rouge"], statistic="spa", level="global", data_dir=shared_data, progress=False)
    assert caught.value.code == 2
    res = runner.invoke(app, ["run", "-j", "chaganty", "-m", "rouge", "--statistic", "spa", "--level", "global",
                              "--data-dir", str(shared_data)])
    assert res.exit_code == 2 and str(caught.value) in " ".join(res.output.split())
    with pytest.raises(MetaEvalError, match="did you mean .*rougeL-f"):
        run("chaganty", metrics=["rouge"], baseline="rougeL-g", data_dir=shared_data, progress=False)
    with pytest.raises(MetaEvalError, match="pools two datasets"):
        run("qags", subset="all", metrics=["chrf"], options={"ref": "source"}, data_dir=shared_data,
            progress=False)


@pytest.mark.parametrize("call", ["run", "run_protocol", "probe", "publish"])
@pytest.mark.parametrize("resamples", [1, 0, -5, 9, 50.0, True])
def test_resamples_under_10_are_refused_as_the_command_refuses_them(tmp_path, call, resamples):
    """``run(..., resamples=1)`` gave the interval (-1.0, -1.0) around 0.0 where ``--resamples 1`` is refused: the
    library refuses it too, before any loading, with one sentence shared by run, run --protocol and probe."""
    import meta_eval
    from meta_eval import MetaEvalError
    from meta_eval.probe.run import probe

    from meta_eval.leaderboard.publish import publish

    first = "sms-2019" if call == "run_protocol" else str(tmp_path / "missing.jsonl")  # never loaded
    with pytest.raises(MetaEvalError, match=rf"^--resamples must be a whole number >= 10, not {resamples!r}$"):
        if call == "publish":  # before the folder is made
            publish(first, tmp_path / "board", resamples=resamples, data_dir=tmp_path, no_cache=True, progress=False)
        else:
            function = probe if call == "probe" else getattr(meta_eval, call)
            function(first, resamples=resamples, data_dir=tmp_path, no_cache=True, progress=False)
    assert not (tmp_path / "board").exists()
    with pytest.raises(MetaEvalError, match=r"^--permutations must be a whole number >= 10, not 1$"):
        meta_eval.run(first, permutations=1, data_dir=tmp_path, no_cache=True, progress=False)


@pytest.mark.parametrize("metrics", [[], "", " , "])
def test_a_choice_that_names_no_metric_is_an_error_not_the_default_choice(shared_data, metrics):
    """An empty list (a filter that left nothing) used to run the whole default choice, GloVe metrics included."""
    from meta_eval import MetaEvalError, run, score
    from meta_eval.metrics import Example

    with pytest.raises(MetaEvalError, match=r"the metric choice names no metric") as caught:
        score(metrics, examples=[Example("the cat", ("a cat",))], no_cache=True, progress=False)
    assert caught.value.code == 2
    with pytest.raises(MetaEvalError, match=r"the metric choice names no metric"):
        run("chaganty", metrics=metrics, data_dir=shared_data, no_cache=True, progress=False)
    res = runner.invoke(app, ["run", "-j", "chaganty", "-m", " , ", "--data-dir", str(shared_data), "--no-cache"])
    assert res.exit_code == 2 and "the metric choice names no metric (' , ')" in res.output


def test_a_metric_that_fails_leaves_the_result_incomplete_as_the_command_exits_1(shared_data, tmp_path):
    """The API returns what ran (as the command prints it) and says the rest failed: ``complete`` is False."""
    from meta_eval import run, score
    from meta_eval.metrics import Example

    plugin = tmp_path / "raises.py"
    plugin.write_text("from meta_eval.metrics import Metric, register\n\n\n@register('api-raiser')\n"
                      "class Raiser(Metric):\n    def _score(self, examples):\n        raise ValueError('boom')\n")
    res = run("chaganty", metrics=["api-raiser", "chrf"], plugins=[plugin], limit=40, data_dir=shared_data,
              no_cache=True, progress=False)
    failure = ("api-raiser", f"ValueError: boom (in plugin file {plugin.resolve()})")  # the file to fix
    assert res.failed == [failure] and not res.complete and "chrf" in res.values
    assert res.to_dict()["complete"] is False
    done = score(["api-raiser", "chrf"], examples=[Example("the cat", ("a cat",))], plugins=[plugin], no_cache=True,
                 progress=False)
    assert done.failed == [failure] and not done.complete and "chrf" in done.columns
    ok = score("chrf", examples=[Example("the cat", ("a cat",))], no_cache=True, progress=False)
    assert ok.complete


def test_no_examples_is_said_so():
    """Not "rouge: needs references, which the input does not have" (no example has any, there being none)."""
    from meta_eval import MetaEvalError, score

    with pytest.raises(MetaEvalError, match=r"^no examples to score: the input holds none$"):
        score("rouge", examples=[], no_cache=True, progress=False)


@pytest.mark.parametrize("given", ["a b", {"candidate": "a b", "references": ["a"]}, ("a b", ("a",))])
def test_examples_that_are_not_examples_are_said_so(given):
    from meta_eval import MetaEvalError, score
    from meta_eval.metrics import Example

    with pytest.raises(MetaEvalError, match=rf"^examples\[1\] is a {type(given).__name__}, not a "
                                            r"meta_eval\.metrics\.Example"):
        score(["chrf"], examples=[Example("a b", ("a",)), given], no_cache=True)


@pytest.mark.parametrize("as_path", [str, Path])
def test_score_says_references_are_a_list_of_files(tmp_path, as_path):
    """``score("bleu", candidates="c.txt", references="r.txt")`` read each character of "r.txt" as a file's name
    ("s does not exist"): a single path is refused with the form it takes; a list of one file scores."""
    from meta_eval import MetaEvalError, score

    (tmp_path / "c.txt").write_text("a cat\nthe dog\n")
    (tmp_path / "r.txt").write_text("a cat sat\nthe dog ran\n")
    c, r = as_path(tmp_path / "c.txt"), as_path(tmp_path / "r.txt")
    with pytest.raises(MetaEvalError, match=r"^--references must be a list of paths, one line file per reference "
                                            r"\(references=\[.*r\.txt.*\]\), not the single path .*r\.txt'\)?$"):
        score("bleu", candidates=c, references=r, no_cache=True, progress=False)
    assert len(score("bleu", candidates=c, references=[r], no_cache=True, progress=False).columns["bleu"]) == 2


def test_learn_and_score_give_the_cli_documents(shared_data, tmp_path):
    from meta_eval import learn, score

    cache = tmp_path / "c.sqlite"
    out = tmp_path / "learn.json"
    _cli("learn", "--protocol", "paper", "-j", "chaganty", "-m", "rouge,chrf", "--splits", "20", "--search-splits",
         "10", "--data-dir",
         shared_data, "--cache", cache, "--output", out)
    res = learn("chaganty", ["rouge", "chrf"], protocol="paper", splits=20, search_splits=10, data_dir=shared_data,
                cache=cache, progress=False)
    assert _stable(res.to_dict()) == _stable(json.loads(out.read_text()))
    assert res.to_dict()["provenance"]["command"] is None
    assert json.loads(out.read_text())["provenance"]["command"].startswith("meta-eval learn --protocol paper -j chaganty")
    assert res.to_frame()["features"].iloc[0] == " + ".join(res.best.features)

    data = conftest.small_set(tmp_path / "texts.jsonl", rows=6)
    scored_file = tmp_path / "scores.jsonl"
    _cli("score", "-m", "rouge,chrf", "-i", data, "--cache", cache, "--output", scored_file)
    header, *rows = [json.loads(line) for line in scored_file.read_text().splitlines()]
    got = score(["rouge", "chrf"], input=data, cache=cache, progress=False)
    assert got.n == 6 and got.to_frame().shape == (6, len(got.columns))
    assert header["signatures"] == list(got.signatures.values())
    assert [row["chrf"] for row in rows] == got.columns["chrf"].tolist()


def test_publish_from_python_writes_the_board_the_cli_writes(shared_data, tmp_path):
    from meta_eval import publish

    cache = tmp_path / "c.sqlite"
    _cli("leaderboard", "publish", "-j", "chaganty", "-m", "rouge,chrf", "--resamples", "20", "--data-dir",
         shared_data, "--cache", cache, "--out", tmp_path / "cli_board")
    doc = publish("chaganty", tmp_path / "py_board", ["rouge", "chrf"], resamples=20, data_dir=shared_data,
                  cache=cache, progress=False)
    cli_doc = json.loads((tmp_path / "cli_board" / "results.json").read_text())
    assert _stable(doc["sets"]) == _stable(cli_doc["sets"])
    assert doc["command"].startswith("meta-eval leaderboard publish -j chaganty -m rouge,chrf")
    assert (tmp_path / "py_board" / "index.html").is_file()


def test_import_meta_eval_is_light_and_cli_is_a_thin_shell():
    code = ("import sys, meta_eval; from meta_eval import run, MetaEvalError; "
            "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'matplotlib', 'torch', 'rich') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
    source = (REPO / "cli.py").read_text(encoding="utf-8")
    assert len(source.splitlines()) < 1429 // 2  # was 1,429 lines before the library took the job
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    imported |= {f"{node.module}.{a.name}" for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.ImportFrom) for a in node.names}
    # no statistic, scoring order, metric choice or file logic in the shell: it calls the library and renders
    for inner in ("meta_eval.stats", "meta_eval.evaluate", "meta_eval.scoring.runner", "meta_eval.scoring.selection",
                  "meta_eval.scoring.cache", "meta_eval.report.outputs"):
        assert not any(m == inner or m.startswith(inner + ".") for m in imported), inner


def test_optional_libraries_missing_are_a_sentence(monkeypatch, shared_data):
    """Without the plot extra, to_frame() and plot() say which extra to install (a core install has neither)."""
    import builtins

    from meta_eval import MetaEvalError, run

    res = run("chaganty", metrics=["rouge"], data_dir=shared_data, no_cache=True, progress=False)
    real_import = builtins.__import__

    def no_extras(name, *args, **kwargs):
        if name.split(".")[0] in ("pandas", "matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_extras)
    monkeypatch.setattr("importlib.import_module", lambda name, package=None: no_extras(name))
    with pytest.raises(MetaEvalError, match=r"to_frame\(\) needs pandas: pip install 'meta-eval\[plot\]'"):
        res.to_frame()
    with pytest.raises(MetaEvalError, match=r"plot\(\) needs matplotlib"):
        res.plot("intervals")
