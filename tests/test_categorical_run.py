"""``meta-eval run`` on categorical and pairwise properties (issue #38 items 2-3): label accuracy, Cohen's kappa and
macro-F1 against hand-computed values; the threshold rule's split and threshold reported; the table's numbers are
the JSON's; pairwise accuracy on a tiny LLMBar-like set; Krippendorff's alpha of the raters and with a metric as one
more rater; the real sets judge-bench:cola, llmbar-natural, dices-990 and newsroom; refusals as one sentence."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meta_eval import judgments
from meta_eval.cli import app
from meta_eval.judgments import judge_bench
from meta_eval.metrics import plugin_files

runner = CliRunner()

#: test metrics: `verdict` answers the last word of the candidate in the label space (no, yes) (lower case, the other
#: order than the file's: labels are matched by name, case-insensitively); `words` a numeric score (the candidate's
#: length); `chooser` always answers model_a; `safety-judge` always No among No, Yes, Unsure
PLUGIN = '''
import math

from meta_eval.metrics import Metric, register


class _Free(Metric):
    needs_references = False

    def config(self):
        return {"v": 1}


@register("verdict")
class Verdict(_Free):
    variants = ("verdict",)

    def label_space(self, variant):
        return ("no", "yes")

    def _score(self, examples):
        space = ("no", "yes")
        words = [e.candidate.split()[1] for e in examples]
        return {"verdict": [float(space.index(w)) if w in space else math.nan for w in words]}


@register("words")
class Words(_Free):
    variants = ("words",)

    def _score(self, examples):
        return {"words": [float(len(e.candidate.split())) for e in examples]}


@register("chooser")
class Chooser(_Free):
    variants = ("chooser",)

    def label_space(self, variant):
        return ("model_a", "model_b")

    def _score(self, examples):
        return {"chooser": [0.0 for e in examples]}


@register("safety-judge")
class SafetyJudge(_Free):
    variants = ("safety-judge",)

    def label_space(self, variant):
        return ("No", "Yes", "Unsure")

    def _score(self, examples):
        return {"safety-judge": [float(len(e.candidate) % 3) for e in examples]}
'''

GOLD = ["Yes", "Yes", "Yes", "No", "No", "No", "Yes", "No"]
RATERS = [["Yes", "Yes"], ["Yes", "No"], ["Yes", "Yes"], ["No", "No"], ["No", "Yes"], ["No", "No"], ["Yes", "Yes"],
          ["No", "No"]]
VERDICT = ["yes", "yes", "no", "no", "no", "yes", "yes", "yes"]  # the label metric's answers
LENGTH = [6, 7, 1, 2, 3, 4, 8, 5]  # filler words: the numeric metric scores 2 + LENGTH


@pytest.fixture(autouse=True)
def _forget_plugin_files():
    yield
    plugin_files.unload_all()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _plugin(tmp_path: Path) -> Path:
    path = tmp_path / "labels_plugin.py"
    path.write_text(PLUGIN)
    return path


def _categorical_file(path: Path) -> Path:
    doc = {"dataset": "tiny", "dataset_url": "https://example.org", "expert_annotator": "false",
           "annotations": [{"metric": "ok", "category": "categorical", "labels_list": ["Yes", "No"],
                            "prompt": "OK? {{ response }}"}],
           "instances": [{"id": f"r{i}", "instance": {"user_prompt": f"question {i}",
                                                     "response": f"verdict {v} " + "w " * n},
                          "annotations": {"ok": {"majority_human": g, "individual_human_scores": r}}}
                         for i, (g, r, v, n) in enumerate(zip(GOLD, RATERS, VERDICT, LENGTH))]}
    path.write_text(json.dumps(doc))
    return path


def _run(args: list[str], tmp_path: Path):
    return runner.invoke(app, ["run", *args, "--cache", str(tmp_path / "c.sqlite"), "--plugin",
                               str(_plugin(tmp_path))], env={"COLUMNS": "250"})


def test_label_statistics_match_hand_computed_values_and_the_table_is_the_json(tmp_path):
    path = _categorical_file(tmp_path / "tiny.json")
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "verdict", "--output", str(out), "--format", "csv"], tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert (doc["kind"], doc["statistic"], doc["n"], doc["labels"]) == ("categorical", "kappa", 8, ["Yes", "No"])
    (r,) = doc["results"]
    # confusion (gold rows, answer columns): Yes-Yes 3 (rows 0, 1, 6), Yes-No 1 (row 2), No-No 2 (3, 4), No-Yes 2 (5, 7)
    # accuracy 5/8; kappa: p_o = 5/8, p_e = (4*5 + 4*3)/64 = 1/2, kappa = (5/8 - 1/2)/(1/2) = 1/4
    # F1(Yes) = 2*3/(2*3 + 2 + 1) = 2/3, F1(No) = 2*2/(2*2 + 1 + 2) = 4/7, macro-F1 = 13/21
    assert (r["metric"], r["rule"], r["items"]) == ("verdict", "label", 8)
    assert r["label-accuracy"]["value"] == pytest.approx(5 / 8, abs=1e-12)
    assert r["kappa"]["value"] == pytest.approx(1 / 4, abs=1e-12)
    assert r["macro-f1"]["value"] == pytest.approx(13 / 21, abs=1e-12)
    for name in ("label-accuracy", "kappa", "macro-f1"):
        lo, hi = r[name]["interval"]
        assert lo <= r[name]["value"] <= hi
    # nominal alpha of the raters (2 each): o(Yes,No) = 2 (rows 1 and 4), n = 16, n_Yes = n_No = 8:
    # 1 - 15 * 2 / 64 = 34/64; with the metric's answer as a third rater: o(Yes,No) = 5 halves of pairs... = 5,
    # n = 24, n_Yes = 13, n_No = 11: 1 - 23 * 5 / (13 * 11) = 28/143
    assert doc["human_agreement"]["alpha"] == pytest.approx(34 / 64, abs=1e-12)
    assert r["alpha_with_metric"] == pytest.approx(28 / 143, abs=1e-12)
    # the table (csv on stdout) holds the JSON's numbers, rounded as printed
    table = list(csv.reader(io.StringIO(res.stdout)))
    header, row = table[0], table[1]
    assert row[header.index("metric")] == "verdict"
    assert row[header.index("kappa")] == f"{r['kappa']['value']:.3f}"
    assert row[header.index("label-accuracy")] == f"{r['label-accuracy']['value']:.3f}"
    assert row[header.index("macro-f1")] == f"{r['macro-f1']['value']:.3f}"
    assert row[header.index("macro-f1") + 1] == "[{:.3f}, {:.3f}]".format(*r["macro-f1"]["interval"])
    assert row[header.index("alpha +metric")] == f"{r['alpha_with_metric']:.3f}"
    assert "rule: verdict: label: its answer is the label" in _flat(res.output)
    assert "human agreement Krippendorff's alpha (nominal, 2 raters per item) = 0.531" in _flat(res.output)


def _best_rule(scores, gold):
    """The threshold rule by brute force: every t in {-inf} and the distinct scores, H = Yes then No, the first best
    label accuracy."""
    best = None
    for high, low in (("Yes", "No"), ("No", "Yes")):
        for t in [-math.inf] + sorted(set(scores)):
            acc = sum((high if s > t else low) == g for s, g in zip(scores, gold)) / len(gold)
            if best is None or acc > best[0]:
                best = (acc, t, high, low)
    return best


def test_a_numeric_metric_meets_two_labels_by_a_threshold_chosen_on_half_the_items(tmp_path):
    import numpy as np

    path = _categorical_file(tmp_path / "tiny.json")
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "words,verdict", "--statistic", "label-accuracy", "--seed", "3",
                "--baseline", "verdict", "--output", str(out)], tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    r = next(x for x in doc["results"] if x["metric"] == "words")
    # the documented split: a permutation drawn with default_rng(seed); its first n // 2 rows choose the rule
    perm = np.random.default_rng(3).permutation(8)
    fit, held = sorted(perm[:4]), sorted(perm[4:])
    scores = [2.0 + n for n in LENGTH]
    _, t, high, low = _best_rule([scores[i] for i in fit], [GOLD[i] for i in fit])
    assert (r["rule"], r["threshold"], r["high_label"], r["items"]) == ("threshold", t, high, 4)
    answers = [high if scores[i] > t else low for i in held]
    expected = sum(a == GOLD[i] for a, i in zip(answers, held)) / 4
    assert r["label-accuracy"]["value"] == pytest.approx(expected, abs=1e-12)
    assert doc["split"] == {"seed": 3, "fit_items": 4, "held_out_items": 4}
    assert r["p_vs_baseline"] is not None and 0 <= r["p_vs_baseline"] <= 1  # tested on the held-out items
    out_text = _flat(res.output)
    assert (f"rule: words: threshold: score > {t:.4g} gives {high}, else {low}: threshold and direction chosen on 4 "
            "items (maximising label-accuracy), statistics on the other 4") in out_text


PAIRS = [(3, 1, "model_a"), (1, 4, "model_b"), (2, 2, "model_a"), (5, 1, "model_b"), (1, 3, "model_b")]


def test_pairwise_accuracy_on_a_tiny_llmbar_like_set(tmp_path):
    doc = {"dataset": "pairs", "annotations": [{"metric": "pref", "category": "categorical",
                                                 "labels_list": ["model_a", "model_b"], "prompt": "{{ input }}"}],
           "instances": [{"id": i, "instance": {"input": f"instruction {i}", "output_a": "x " * a,
                                                "output_b": "y " * b},
                          "annotations": {"pref": {"majority_human": g, "individual_human_scores": [g]}}}
                         for i, (a, b, g) in enumerate(PAIRS)]}
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "words,chooser", "--baseline", "chooser", "--pairwise", "--output", str(out)],
               tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    got = {r["metric"]: r for r in doc["results"]}
    assert set(doc["pvalues"]["p"]) == {"words > chooser", "chooser > words"}  # --pairwise: every ordered pair
    assert doc["pvalues"]["p"]["words > chooser"] == got["words"]["p_vs_baseline"]
    # words picks the longer output: rows 0, 1, 4 right, row 3 wrong, row 2 equal (picks neither: wrong) = 3/5
    assert got["words"]["rule"] == "pick" and got["words"]["pairwise-accuracy"]["value"] == pytest.approx(0.6)
    # chooser always answers model_a: rows 0 and 2 right = 2/5
    assert got["chooser"]["rule"] == "label" and got["chooser"]["pairwise-accuracy"]["value"] == pytest.approx(0.4)
    assert got["words"]["p_vs_baseline"] is not None
    assert "picks the one it scores higher; equal scores pick neither (wrong)" in _flat(res.output)
    assert "picking neither counts wrong, as LLMBar counts it" in _flat(res.output)
    # one multiple-comparison rule (issue #35): adjusted over the n(n-1)/2 pairs, the better-valued variant first,
    # as graded runs, the heatmap and the clusters adjust (with 2 variants: 1 pair, so adjusted = raw)
    assert doc["pvalues"]["p_adjusted"] == {"words > chooser": doc["pvalues"]["p"]["words > chooser"]}
    assert "adjusted: Holm over all 1 pair)" in _flat(res.output)


def test_refusals_are_one_sentence(tmp_path):
    path = _categorical_file(tmp_path / "tiny.json")
    for args, expected in [
        (["--statistic", "spearman"], "--statistic spearman does not apply to tiny.json's 'ok', a categorical "
                                      "property (labels Yes, No): use --statistic label-accuracy or kappa or "
                                      "macro-f1"),
        (["--statistic", "pairwise-accuracy"], "use --statistic label-accuracy or kappa or macro-f1"),
        (["--statistic", "kappa", "--level", "system"], "--statistic kappa compares labels item by item (one "
                                                         "level, no systems): drop --level system"),
        (["--differences"], "--differences is for graded properties"),
    ]:
        res = _run(["-j", str(path), "-m", "verdict", *args], tmp_path)
        assert res.exit_code == 2, res.output
        assert expected in _flat(res.output) and "Traceback" not in res.output, res.output
    graded = tmp_path / "graded.jsonl"  # graded human scores: no label statistic
    graded.write_text("".join(json.dumps({"candidate": "w " * i, "scores": {"q": i}}) + "\n" for i in range(1, 6)))
    res = _run(["-j", str(graded), "-m", "words", "--statistic", "kappa"], tmp_path)
    assert res.exit_code == 2, res.output
    assert ("--statistic kappa compares labels: graded's 'q' is not a categorical or pairwise property"
            in _flat(res.output)), res.output


def test_cola_a_numeric_metric_runs_with_its_threshold_rule(shared_data, tmp_path):
    out = tmp_path / "r.json"
    res = _run(["-j", "judge-bench:cola", "-m", "words", "--data-dir", str(shared_data), "--output", str(out)],
               tmp_path)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    (r,) = doc["results"]
    assert doc["n"] == 1043 and r["rule"] == "threshold" and r["items"] == 522
    assert "threshold and direction chosen on 521 items (maximising kappa), statistics on the other 522" in \
        _flat(res.output)
    assert "human agreement: one rater: no agreement" in _flat(res.output)


def test_llmbar_a_numeric_metric_picks_between_the_two_outputs(shared_data, tmp_path):
    out = tmp_path / "r.json"
    res = _run(["-j", "judge-bench:llmbar-natural", "-m", "words", "--data-dir", str(shared_data), "--output",
                str(out)], tmp_path)
    assert res.exit_code == 0, res.output
    jset = judgments.load("judge-bench:llmbar-natural", shared_data, download=False)
    right = 0
    for row in jset.rows:
        a, b = len(row.fields["output_a"].split()), len(row.fields["output_b"].split())
        right += (a != b) and ("model_a" if a > b else "model_b") == row.labels["quality_single_turn"]
    (r,) = json.loads(out.read_text())["results"]
    assert r["rule"] == "pick" and r["pairwise-accuracy"]["value"] == pytest.approx(right / len(jset), abs=1e-12)


def test_dices_alpha_is_human_agreement_and_a_named_numeric_metric_is_not_run(shared_data, tmp_path):
    out = tmp_path / "r.json"
    res = _run(["-j", "judge-bench:dices-990", "-m", "safety-judge,words", "--data-dir", str(shared_data),
                "--output", str(out)], tmp_path)
    assert res.exit_code == 1, res.output  # words was named and cannot meet 3 labels: not run
    text = _flat(res.output)
    assert "words not run: a numeric score has no rule to meet 3 labels (No, Yes, Unsure)" in text
    doc = json.loads(out.read_text())
    expected = judge_bench.human_agreement(judgments.load("judge-bench:dices-990", shared_data,
                                                           download=False))["safety"]
    assert doc["human_agreement"] == expected and expected["alpha"] is not None
    assert f"= {expected['alpha']:.3f}" in text
    (r,) = doc["results"]
    assert r["metric"] == "safety-judge" and r["rule"] == "label" and r["alpha_with_metric"] is not None


def test_a_graded_judge_bench_run_shows_the_raters_alpha(shared_data, tmp_path):
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["run", "-j", "judge-bench:newsroom", "-m", "textrank", "--human", "Coherence",
                              "--data-dir", str(shared_data), "--cache", str(tmp_path / "c.sqlite"), "--output",
                              str(out)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    expected = judge_bench.human_agreement(judgments.load("judge-bench:newsroom", shared_data,
                                                           download=False))["Coherence"]
    assert json.loads(out.read_text())["human_agreement"] == expected
    assert f"human agreement Krippendorff's alpha (ordinal, 3 raters per item) = {expected['alpha']:.3f}" in \
        _flat(res.output)


def test_the_library_call_returns_the_json_of_the_command(tmp_path):
    from meta_eval import run
    from meta_eval.categorical import CategoricalResult

    path = _categorical_file(tmp_path / "tiny.json")
    out = tmp_path / "r.json"
    res = _run(["-j", str(path), "-m", "verdict,words", "--output", str(out)], tmp_path)
    assert res.exit_code == 0, res.output
    result = run(str(path), "verdict,words", plugins=[tmp_path / "labels_plugin.py"], cache=tmp_path / "c.sqlite",
                 progress=False)
    assert isinstance(result, CategoricalResult)
    doc, mine = json.loads(out.read_text()), result.to_dict()
    for key in ("results", "human_agreement", "split", "statistic", "n", "labels", "baseline"):
        assert mine[key] == doc[key], key
    assert result.values == {r["metric"]: r["kappa"]["value"] for r in doc["results"]}


def test_a_categorical_run_records_its_provenance_in_the_json_and_the_score_files_sidecar(tmp_path):
    """Issue #39 item 4 on the categorical path: the command, meta-eval's version and the SHA-256 of the judgment
    file, in the run's JSON and in its --scores-out file's sidecar (the same object)."""
    import hashlib

    path = _categorical_file(tmp_path / "tiny.json")
    out, scores = tmp_path / "r.json", tmp_path / "s.csv"
    res = _run(["-j", str(path), "-m", "verdict", "--output", str(out), "--scores-out", str(scores)], tmp_path)
    assert res.exit_code == 0, res.output
    prov = json.loads(out.read_text())["provenance"]
    assert prov["command"].startswith("meta-eval run -j ") and str(path) in prov["command"]
    digests = {Path(i["path"]).name: i["sha256"] for i in prov["inputs"] if "path" in i}
    assert digests["tiny.json"] == hashlib.sha256(path.read_bytes()).hexdigest()
    side = json.loads((tmp_path / "s.csv.meta.json").read_text())
    assert side["provenance"] == prov and side["sha256"] == hashlib.sha256(scores.read_bytes()).hexdigest()


def test_pairwise_p_values_print_as_the_graded_tables_print_them():
    """The --pairwise line printed ``p = < 0.02 (adjusted 0.020)``: a p at the resolution reads ``p < 0.02`` and its
    adjusted value, an upper bound, ``<= 0.020``."""
    from meta_eval.report.tables import _pair_p

    assert _pair_p(0.0, 0.0196, 50, "a > b") == "a > b p < 0.02 (adjusted <= 0.020)"
    assert _pair_p(0.31, 0.62, 50, "a > b") == "a > b p = 0.310 (adjusted 0.620)"


def _shuffled(doc: dict, seed: int) -> dict:
    import random

    instances = list(doc["instances"])
    random.Random(seed).shuffle(instances)
    return dict(doc, instances=instances)


def _numbers(doc: dict) -> dict:
    """What a categorical run reports, per variant (the split's sizes, rules, statistics, intervals, p-values)."""
    keep = ("rule", "threshold", "high_label", "items", "kappa", "label-accuracy", "macro-f1", "pairwise-accuracy",
            "p_vs_baseline", "p_adjusted_vs_baseline")
    return {"results": {r["metric"]: {k: r.get(k) for k in keep} for r in doc["results"]},
            "split": doc.get("split"), "pairwise": doc.get("pairwise")}


def test_the_files_order_of_instances_changes_no_number(shared_data, tmp_path):
    """The threshold's half, the item bootstrap and the paired permutation test drew by file position, so the same
    instances in another order gave another rule and other numbers (cola: kappa 0.005 -> -0.068; audit, session
    38). They draw over the items sorted by id now, as the graded levels sort documents and systems."""
    tiny = json.loads(_categorical_file(tmp_path / "tiny.json").read_text())
    cola = json.loads(judge_bench.locate("cola", shared_data, download=False).read_text(encoding="utf-8"))
    cola = dict(cola, instances=cola["instances"][:300])
    for name, doc, metrics in (("tiny", tiny, "verdict,words"), ("cola", cola, "words")):
        seen = []
        for k, version in enumerate((doc, _shuffled(doc, 1), dict(doc, instances=doc["instances"][::-1]))):
            path = tmp_path / f"{name}-{k}.json"
            path.write_text(json.dumps(version))
            out = tmp_path / f"{name}-{k}.out.json"
            extra = ["--baseline", "words", "--pairwise"] if "," in metrics else []
            res = _run(["-j", str(path), "-m", metrics, "--resamples", "200", "--output", str(out), *extra],
                       tmp_path)
            assert res.exit_code == 0, res.output
            seen.append(_numbers(json.loads(out.read_text())))
        assert seen[0] == seen[1] == seen[2], name
    assert seen[0]["split"] is not None and seen[0]["results"]["words"]["rule"] == "threshold"
