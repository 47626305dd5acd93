"""Metrics meet data: choosing metrics for a set (:mod:`~meta_eval.scoring.selection`), scoring batches
(:mod:`~meta_eval.scoring.runner`) on an engine (:mod:`~meta_eval.scoring.engines`, :mod:`~meta_eval.scoring.chunks`)
with a score cache (:mod:`~meta_eval.scoring.cache`), and the files of ``meta-eval score``
(:mod:`~meta_eval.scoring.score_files`)."""
