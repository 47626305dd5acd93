"""The leaderboard blocks of sets read from JUDGE-BENCH's schema (``judge-bench:<name>``, a JUDGE-BENCH file): rows
without a system, graded properties and categorical / pairwise ones (``leaderboard/judge-bench/``).

One number per question: every number of these blocks is the number ``meta-eval run`` gives on the same set,
property, metrics, options, resamples and seed.

- A graded or continuous property (:func:`systemless_results`): rows have no system, so only the global level is
  computed, as ``run`` does (:func:`meta_eval.evaluate.global_values` over the rows); each of Spearman, Pearson and
  Kendall is one block. There is no bootstrap interval (``ci`` ``[null, null]``): BOOT-BOTH draws documents and
  systems, and ``run`` gives none either (:func:`meta_eval.evaluate.add_global_intervals`); the pairwise tests of the
  primary correlation are Williams tests on the rows, as on every board's global level; the human ceiling is
  ``run``'s (undefined without systems, with its reason).
- A categorical or pairwise property (:func:`categorical_set`): :func:`meta_eval.categorical.run_categorical` itself,
  with no baseline and ``--pairwise``; each of its statistics (``kappa``, ``label-accuracy``, ``macro-f1``; on a
  pairwise property ``pairwise-accuracy``) is one block at the global level whose results are the run's values and
  bootstrap intervals over items; the sorting statistic's block (``kappa``, as ``run``'s default) holds the run's
  paired tests of every ordered pair (``p``) and, for each better-valued variant against each worse-valued one,
  ``p_adjusted`` over those n(n-1)/2 pairs, as ``run --pairwise`` reports them and as every board's clusters adjust,
  and the significance clusters that the boards' cluster rule makes of those p-values. Each result carries its ``rule`` and
  ``items`` (a threshold rule is evaluated on the held-out half). A property where no chosen metric has a rule (a
  numeric metric on 3 labels) gives a set block with no levels and the reason in ``not_compared``.
- Every such set block carries the set's ``human_agreement``
  (:func:`meta_eval.judgments.judge_bench.human_agreement`'s entry for the property: Krippendorff's alpha at the
  property's level and the raters per item), as ``run`` reports it.
"""
from __future__ import annotations

import numpy as np

from meta_eval.errors import MetaEvalError, what_is_kept
from meta_eval.stats.clusters import best_first

__all__ = ["systemless_results", "categorical_set", "judge_command", "set_lines", "ADD_A_JUDGE", "LLM_JUDGE_OPTIONS"]

#: What ``judge_command`` adds to a board's command: the LLM judge with each set's own prompt (docs/metrics.md)
LLM_JUDGE_OPTIONS = ("-o", "template=set", "-o", "base_url=http://127.0.0.1:8000/v1", "-o", "model=NAME")


def _clean(x) -> float | None:
    """A number as computed (every bit, as ``run --output`` writes it: the pages round the number ``run`` rounds,
    never a number rounded twice), None for a missing or non-finite one."""
    return None if x is None or not np.isfinite(x) else float(x)


def _metric_entries(scored, variant_filter=lambda v: True) -> tuple[list, list, list]:
    variants, arrays, metrics = [], [], []
    for ms in scored:
        for variant, values in ms.scores.items():
            if not variant_filter(variant):
                continue
            variants.append(variant)
            arrays.append(values if ms.higher_is_better else -values)
            metrics.append({"variant": variant, "metric": ms.metric, "signature": ms.signature,
                            "higher_is_better": ms.higher_is_better, "system_score": ms.system_mode})
    return variants, arrays, metrics


def systemless_results(jset, dimension: str, scored, *, n_resamples: int, seed: int, confidence: float,
                       alpha: float, correction: str, primary: str, variant_filter, pairwise: bool) -> dict:
    """The leaderboard block of a set whose rows have no system (see the module notes): the global level only."""
    from meta_eval.evaluate import global_values, units_warning
    from meta_eval.leaderboard.publish import KINDS, _ceiling, _words, pairwise_tests
    from meta_eval.stats import GROUPING, describe
    from meta_eval.stats.significance import williams_pvalues

    variants, arrays, metrics = _metric_entries(scored, variant_filter)
    human = jset.human(dimension)
    rows = np.isfinite(human)
    n_units = int(rows.sum())
    blocks = []
    for kind in KINDS:
        points = global_values(jset, dimension, arrays, kind)
        ok = np.flatnonzero(np.isfinite(points))
        if len(ok) == 0:
            continue
        names = [variants[i] for i in ok]
        results = [{"variant": n, "r": _clean(points[i]), "ci": [None, None], "rank": None}
                   for i, n in zip(ok, names)]
        tests = None
        if pairwise and kind == primary and len(ok) > 1:
            P = williams_pvalues(human[rows], [arrays[i][rows] for i in ok], kind)
            tests = pairwise_tests(names, points[ok], P, describe(kind, "global")["test"], n_resamples, alpha,
                                   correction, results)
        results.sort(key=lambda r: best_first(r["r"], r["variant"]))
        blocks.append({"level": "global", "statistic": kind, "correlation": kind, "grouping": GROUPING["global"],
                       **_words(jset, "global"), "n_units": n_units,
                       "warning": units_warning("global", n_units, jset.task), "results": results,
                       "pairwise": tests, "seed": seed, "n_resamples": n_resamples, "ci_method": "none",
                       "confidence": confidence,
                       "interval": "none: rows without a system cannot be resampled by document and system "
                                   "(BOOT-BOTH), as meta-eval run says",
                       "undefined": [variants[i] for i in range(len(variants)) if i not in set(ok)],
                       "ceiling": _portable(_ceiling(jset, dimension, kind, "global", n_resamples, seed, confidence,
                                                     None), jset)})
    return {"judgments": jset.name, "subset": jset.subset, "task": jset.task, "human": dimension,
            "n_rows": len(jset), "n_documents": jset.documents(), "n_systems": len(jset.systems()),
            "metrics": metrics, "levels": blocks}


def _portable(ceiling: dict, jset) -> dict:
    """The ceiling's note with the set's file named by the set's name (``judge-bench:newsroom``), not by its path on
    the machine that published it: a board is compared with fresh runs elsewhere."""
    if ceiling.get("note") and jset.origin() != jset.name:
        ceiling = {**ceiling, "note": ceiling["note"].replace(jset.origin(), jset.name)}
    return ceiling


def _p_matrix(names: list[str], pvalues: dict, key: str) -> list[list]:
    table = pvalues[key]
    return [[None if a == b else _clean(table.get(f"{a} > {b}", float("nan"))) for b in names] for a in names]


def categorical_set(loaded, dim: str, prop, *, metrics, variants, options, resamples: int, seed: int, alpha: float,
                    correction: str, data_dir, cache, no_cache, batch_size, engine, progress, say) -> dict:
    """The leaderboard block of categorical / pairwise property ``prop`` of set ``loaded``: ``meta-eval run``'s
    statistics (:func:`meta_eval.categorical.run_categorical`, no baseline, every pair tested; see the module
    notes)."""
    import time

    from meta_eval.categorical import run_categorical
    from meta_eval.leaderboard.publish import pairwise_tests

    common = {"judgments": loaded.name, "subset": loaded.subset, "task": loaded.task, "human": dim,
              "kind": "pairwise" if prop.pairwise else "categorical", "labels": list(prop.labels)}
    try:
        result = run_categorical(
            loaded, dim, prop, asked_statistic=None, metrics=metrics, variants=variants, options=options,
            baseline=None, resamples=resamples, seed=seed, correction=correction, pairwise=True, data_dir=data_dir,
            cache=cache, no_cache=no_cache, batch_size=batch_size, engine=engine, progress=progress, say=say,
            output=None, started=time.perf_counter(), scores_out=None, figures=())
    except MetaEvalError as exc:
        # no chosen metric has a rule for these labels (numeric metrics on 3 labels): the set is listed with why;
        # a metric that failed (code 1) or any other error stops the board
        if exc.code != 2 or not str(exc).startswith("no metric could be compared with the labels"):
            raise
        from meta_eval.judgments.judge_bench import human_agreement

        rows = [r for r in loaded.rows if r.labels.get(dim) is not None]
        return {**common, "n_rows": len(rows), "n_documents": len(rows), "n_systems": 0, "metrics": [],
                "levels": [], "sorted_by": None, "human_agreement": human_agreement(loaded).get(dim), "split": None,
                "rows_without_human": len(loaded.rows) - len(rows), "notes": list(loaded.notes),
                "not_compared": str(exc), "skipped": [{"metric": n, "reason": r}
                                                      for n, r in getattr(exc, "skipped", [])],
                "not_measured": {}}
    if result.failed:  # as every board: one without a metric it was asked for is not published
        raise MetaEvalError(f"{loaded.name}: " + "; ".join(f"{n} failed: {r}" for n, r in result.failed)
                            + f"; nothing was written ({what_is_kept(no_cache)})",
                            code=1)
    doc = result.to_dict()
    rules = {r["metric"]: r for r in result.results}
    metric_entries = [{"variant": v, "metric": ms.metric, "signature": ms.signature,
                       "higher_is_better": ms.higher_is_better, "system_score": ms.system_mode,
                       "rule": rules[v]["rule"], "rule_text": rules[v]["rule_text"]}
                      for ms in result.scores for v in ms.scores if v in rules]
    ceiling = {"value": None, "note": "undefined: no leave-one-annotator-out ceiling for label statistics; the "
                                      "raters' agreement is the set's human_agreement (Krippendorff's alpha)"}
    blocks = []
    for statistic in (result.statistic, *[s for s in result.statistics if s != result.statistic]):
        results = [{"variant": r["metric"], "r": _clean(r[statistic]["value"]),
                    "ci": [_clean(x) for x in r[statistic]["interval"]], "rank": None,
                    "rule": r["rule"], "items": r["items"]} for r in result.results]
        tests = None
        if statistic == result.statistic and result.pvalues is not None:
            names = [r["variant"] for r in results if r["r"] is not None]
            P = np.array([[np.nan if x is None else x for x in row]
                          for row in _p_matrix(names, result.pvalues, "p")], dtype=float)
            tests = pairwise_tests(names, [r["r"] for r in results if r["r"] is not None], P,
                                   "one-sided paired permutation over items", resamples, alpha, correction,
                                   [r for r in results if r["r"] is not None])
        results.sort(key=lambda r: best_first(r["r"], r["variant"]))
        # the items the statistics rest on: a threshold rule's are the held-out half (each result's "items")
        counts = sorted({r["items"] for r in results})
        one = len(counts) == 1
        blocks.append({"level": "global", "statistic": statistic, "paper": _PAPERS[statistic], "grouping": "items",
                       "label": "item level", "units": "items" if one else "items labelled (each variant's own: "
                       "column items)", "n_units": counts[0] if one else result.n, "warning": None,
                       "results": results, "pairwise": tests, "seed": seed, "n_resamples": resamples,
                       "ci_method": "percentile bootstrap over items", "interval": doc["interval"],
                       "confidence": 0.95, "undefined": [r["variant"] for r in results if r["r"] is None],
                       "ceiling": ceiling})
    return {**common, "n_rows": result.n, "n_documents": result.n, "n_systems": 0, "metrics": metric_entries,
            "levels": blocks, "sorted_by": result.statistic, "human_agreement": result.human_agreement,
            "split": result.split, "rows_without_human": result.rows_without_human, "notes": list(result.notes),
            "skipped": [{"metric": n, "reason": r} for n, r in result.skipped], "not_measured": {}}


_PAPERS = {"kappa": "Cohen (1960)", "label-accuracy": "share of items with the majority label",
           "macro-f1": "mean F1 over the labels", "pairwise-accuracy": "LLMBar (Zeng et al. 2024)"}


ADD_A_JUDGE = (
    "No LLM judge is on this board: it was published offline (no server). Whoever has an OpenAI-compatible server "
    "adds one with the board's own command plus the LLM judge, which asks each set's own prompt for the property "
    "(-o template=set; docs/metrics.md) and answers in the property's labels (rule: label) or on its scale; put the "
    "server's address and model in base_url and model (the key comes from $OPENAI_API_KEY and is never recorded). "
    "Every other metric comes from the score cache or is recomputed to the same numbers.")


def set_lines(s: dict) -> list[str]:
    """The plain-text lines a board's README shows under a JUDGE-BENCH set's heading (none for any other set): the
    property's kind and labels, the raters' agreement, why nothing was compared, each metric's rule, the split."""
    agreement = s.get("human_agreement")
    if agreement is None and "kind" not in s:
        return []
    lines = []
    if "kind" in s:
        lines.append(f"Property {s['human']!r}: {s['kind']}, labels {', '.join(map(str, s['labels']))}"
                     + (f"; statistics as meta-eval run computes them, sorted by {s['sorted_by']}."
                        if s.get("sorted_by") else "."))
    if agreement is not None:
        raters = agreement["raters_per_item"]
        count = str(raters[0]) if raters[0] == raters[1] else f"{raters[0]}-{raters[1]}"
        value = (f"Krippendorff's alpha ({agreement['level']}) = {agreement['alpha']:.3f}"
                 if agreement["alpha"] is not None else f"no Krippendorff's alpha: {agreement['note']}")
        lines.append(f"Human agreement: {value}; {count} rater{'' if count == '1' else 's'} per item.")
    if s.get("not_compared"):  # each metric's reason is a "not run" line already where the board lists them
        lines.append("Not compared: no chosen metric could be compared with the labels (each one's reason above)."
                     if s.get("skipped") else f"Not compared: {s['not_compared']}.")
    for m in s.get("metrics", []):
        if m.get("rule"):
            lines.append(f"Rule of {m['variant']}: {m['rule']}: {m['rule_text']}.")
    split = s.get("split")
    if split:
        lines.append(f"Threshold rules: chosen on {split['fit_items']} items, reported on the other "
                     f"{split['held_out_items']} (seed {split['seed']}).")
    return lines


def judge_page(page: str) -> str:
    """The board page (:data:`meta_eval.leaderboard.render._PAGE`) of a JUDGE-BENCH board: each set's lines
    (:func:`set_lines`) under its heading, a set with nothing compared shown as such, and how to add an LLM judge
    (``add_judge``); every text goes in as ``textContent`` (escaped by the browser). Other boards' pages are
    unchanged."""
    swaps = [
        ('<h2>Ranking</h2>', '<p class="small" id="judge"></p><h2>Ranking</h2>'),
        ('function draw(){ const b = currentBlock(); drawSet(); ',
         'function draw(){ const b = currentBlock(); drawSet(); $("judge").textContent = '
         '(currentSet().judge_lines || []).join(" "); if (!b) { for (const id of ["ranking", "heat"]) '
         '$(id).innerHTML = "<tr><td>nothing compared on this set</td></tr>"; $("chart").innerHTML = ""; '
         '$("figure").innerHTML = ""; $("about").textContent = ""; return; } '),
        ('<h2>Metrics and their options</h2>',
         '<h2>Adding an LLM judge</h2><p class="small" id="addjudge"></p><h2>Metrics and their options</h2>'),
        ('refreshChoices();\n</script>', 'refreshChoices();\n$("addjudge").textContent = doc.add_judge || "";\n</script>'),
    ]
    for old, new in swaps:
        if page.count(old) != 1:
            raise MetaEvalError(f"the board page's template changed: {old[:40]!r} is not in it once")
        page = page.replace(old, new)
    return page


def judge_command(doc: dict) -> str | None:
    """The command that adds an LLM judge to a JUDGE-BENCH board: the board's own command with ``llm-judge`` added
    to ``-m`` and the LLM judge's options (:data:`LLM_JUDGE_OPTIONS`; ``base_url`` and ``model`` are the server's),
    ``--force`` to replace the board; None for a board without a JUDGE-BENCH set."""
    import shlex

    if not any(str(s.get("judgments", "")).startswith("judge-bench") for s in doc.get("sets", [])):
        return None
    words = shlex.split(doc["command"])
    if "-m" in words:
        i = words.index("-m") + 1
        words[i] = words[i] + ",llm-judge"
    else:
        words[3:3] = ["-m", "llm-judge"]
    tail = list(LLM_JUDGE_OPTIONS) + ([] if "--force" in words else ["--force"])
    return " ".join(shlex.quote(w) for w in words + tail)
