"""Blind spots: how a metric's score reacts to controlled errors in a text (``meta-eval probe``; docs/probe.md).

- :mod:`meta_eval.probe.perturbations`: the perturbations, one small pure function each, in families (fluency, order,
  content, and the invariances a metric should not punish), with the paper each comes from;
- :mod:`meta_eval.probe.run`: the BLINDSPOT protocol (He et al. 2023) over a judgment set, :func:`~.run.probe`;
- :mod:`meta_eval.probe.stats`: detection rates, ties, rises, bootstrap intervals, the exact McNemar test;
- :mod:`meta_eval.probe.report`: the table, the Markdown section and the heatmap;
- :mod:`meta_eval.probe.board`: ``blindspots.json`` on a leaderboard.
"""
