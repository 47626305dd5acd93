"""``--two-sided`` on a categorical property counts the other tail, as a graded run does: the test of the baseline
against the variant on the same permutations, never ``1 - p + 1/(B+1)``, and the JSON carries what the table shows.

With labels the statistic is discrete, so many permutations tie the observed difference; each tail counts them,
and the guess (which counts the tie once) is too small by about their share."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import yes_no_set

runner = CliRunner()

GOLD = ["Yes", "No"] * 20  # 40 items
BASE_WRONG = {1, 4, 9, 14, 22, 30, 33, 37}  # the baseline's mistakes (8)
WEAK_WRONG = {0, 1, 4, 9, 14, 22, 30, 33, 35, 38}  # the other judge's (10): worse, sharing most of the baseline's

PLUGIN = '''
from meta_eval.metrics import Metric, register

GOLD = {gold!r}


class _Judge(Metric):
    needs_references = False
    wrong = set()

    def config(self):
        return {{"wrong": sorted(self.wrong)}}

    def label_space(self, variant):
        return ("no", "yes")

    def _score(self, examples):
        out = []
        for e in examples:
            i = int(e.candidate.split()[1])
            right = GOLD[i] == "Yes"
            out.append(float(right != (i in self.wrong)))
        return {{self.variants[0]: out}}


@register("base-judge")
class Base(_Judge):
    variants = ("base-judge",)
    wrong = {base!r}


@register("weak-judge")
class Weak(_Judge):
    variants = ("weak-judge",)
    wrong = {weak!r}
'''


def _answers(wrong):
    return [g if i not in wrong else ("No" if g == "Yes" else "Yes") for i, g in enumerate(GOLD)]


@pytest.fixture()
def judged(tmp_path):
    from meta_eval.cli import app
    from meta_eval.metrics import plugin_files

    path = yes_no_set(tmp_path / "tiny.json", GOLD, lambda i, g: f"item {i}")
    plugin = tmp_path / "judges.py"
    plugin.write_text(PLUGIN.format(gold=GOLD, base=BASE_WRONG, weak=WEAK_WRONG))

    def invoke(*extra):
        out = tmp_path / f"r{len(extra)}.json"
        res = runner.invoke(app, ["run", "-j", str(path), "-m", "base-judge,weak-judge", "--baseline", "base-judge",
                                  "--statistic", "label-accuracy", "--resamples", "200", "--output", str(out),
                                  "--cache", str(tmp_path / "c.sqlite"), "--plugin", str(plugin), "--format", "csv",
                                  *extra])
        assert res.exit_code == 0, res.output
        return res.stdout, json.loads(out.read_text())

    try:
        yield invoke
    finally:
        plugin_files.unload_all()


def test_the_other_tail_is_counted_and_the_json_says_what_the_table_shows(judged):
    from meta_eval.stats.agreement import paired_test

    by_id = sorted(range(len(GOLD)), key=lambda i: f"r{i}")  # the items in the order the test draws them: by id
    gold = [GOLD[i] for i in by_id]
    weak, base = ([a[i] for i in by_id] for a in (_answers(WEAK_WRONG), _answers(BASE_WRONG)))
    one = paired_test("accuracy", gold, weak, base, resamples=200, seed=0)  # weak > base: a large p
    other = paired_test("accuracy", gold, base, weak, resamples=200, seed=0)  # the tail two-sided needs
    assert one + other > 1 + 2 / 201  # the tie with the observed difference counted in both tails, many times over
    counted = min(1.0, 2 * min(one, other))
    guessed = min(1.0, 2 * min(one, 1 - one + 1 / 201))
    assert abs(counted - guessed) > 0.01  # the test can tell them apart

    table, doc = judged("--two-sided")
    row = next(r for r in doc["results"] if r["metric"] == "weak-judge")
    assert row["p_vs_baseline"] == pytest.approx(one)  # the one-sided p stays as it was
    assert row["p_vs_baseline_two_sided"] == pytest.approx(counted)
    assert row["p_adjusted_vs_baseline"] == pytest.approx(counted)  # one comparison: Holm leaves it
    assert doc["multiple_comparisons"]["sides"] == "two-sided" and doc["test"].startswith("two-sided")
    line = next(ln for ln in table.splitlines() if ln.startswith("weak-judge"))
    assert line.rstrip().endswith(f"{counted:.3f}")  # the table's p is the JSON's

    table, doc = judged()
    row = next(r for r in doc["results"] if r["metric"] == "weak-judge")
    assert "p_vs_baseline_two_sided" not in row and doc["multiple_comparisons"]["sides"] == "one-sided"
    assert row["p_adjusted_vs_baseline"] == pytest.approx(one)
    line = next(ln for ln in table.splitlines() if ln.startswith("weak-judge"))
    assert line.rstrip().endswith(f"{one:.3f}")


def test_a_one_sided_result_is_not_shown_two_sided(judged):
    from meta_eval.errors import MetaEvalError
    from meta_eval.categorical import CategoricalResult
    from meta_eval.report.tables import categorical_pvalues

    result = CategoricalResult.__new__(CategoricalResult)
    result.results, result.two_sided = [{"metric": "a", "p_vs_baseline": 0.3, "p_adjusted_vs_baseline": 0.3}], False
    with pytest.raises(MetaEvalError, match="one-sided"):
        categorical_pvalues(result, two_sided=True)


@pytest.mark.parametrize("given", [("--level", "system"), ("--level", "summary"), ("--control", "system")])
def test_a_level_or_control_on_a_label_property_is_refused_not_ignored(tmp_path, given):
    """Without --statistic the graded default resolved them, then the categorical run ignored them (exit 0)."""
    from meta_eval.cli import app

    path = yes_no_set(tmp_path / "tiny.json", GOLD)
    res = runner.invoke(app, ["run", "-j", str(path), "-m", "length", "--resamples", "20", "--no-cache", *given])
    assert res.exit_code == 2, res.output
    assert f"'ok' is categorical (labels Yes, No): its statistics compare labels item by item (one level, no " \
           f"systems): drop {' '.join(given)}" in " ".join(res.output.split())
