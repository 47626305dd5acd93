"""meta-eval: which automatic text-evaluation metric agrees best with people.

The whole job as library calls (each takes the options of the command of the same name, by the same names, and
raises :class:`MetaEvalError` with the message the command prints)::

    from meta_eval import run
    res = run("chaganty", metrics=["rouge", "chrf"], level="system")
    res.values, res.intervals, res.pvalues_vs_baseline, res.ceiling.value, res.signatures
    res.to_frame()                       # pandas, imported only here
    res.pvalue_matrix().to_frame()       # all pairs

- :func:`run` (``meta-eval run``) -> :class:`~meta_eval.results.RunResult`;
  :func:`run_protocol` (``meta-eval run --protocol``);
- :func:`score` (``meta-eval score``) -> :class:`~meta_eval.results.ScoreResult`;
- :func:`learn` (``meta-eval learn``) -> :class:`~meta_eval.learning.pipeline.LearnResult`;
- :func:`publish` (``meta-eval leaderboard publish``) -> the board's document.

One import namespace: ``meta_eval.metrics`` (the metric registry and metrics), ``meta_eval.judgments`` (human-judgment
sets), ``meta_eval.leaderboard`` (published boards), ``meta_eval.cli`` (the ``meta-eval`` command), and the
meta-evaluation in ``meta_eval.stats`` (statistics), ``meta_eval.scoring`` (metric choice, scoring, cache, engines),
``meta_eval.learning`` and ``meta_eval.report`` (outputs, progress, tables); :mod:`meta_eval._layout` says how the
folders at the repository's root are found under these names.

Importing ``meta_eval`` is cheap: nothing above is imported until it is used (no numpy-heavy statistics, pandas,
matplotlib or torch).
"""
from meta_eval import _layout

_layout.install()

__all__ = ["MetaEvalError", "RunResult", "learn", "publish", "run", "run_protocol", "score"]

_LAZY = {"run": ("meta_eval.task", "run"), "run_protocol": ("meta_eval.task", "run_protocol"),
         "score": ("meta_eval.task", "score"), "learn": ("meta_eval.learning.pipeline", "learn"),
         "publish": ("meta_eval.leaderboard.publish", "publish"),
         "MetaEvalError": ("meta_eval.errors", "MetaEvalError"),
         "RunResult": ("meta_eval.results", "RunResult")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'meta_eval' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
