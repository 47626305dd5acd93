"""Blind spots: how a metric's score reacts to controlled errors in a text (``meta-eval probe``).

- :mod:`meta_eval.probe.perturbations`: the perturbations, one small pure function each, in families (fluency, order,
  content, and the invariances a metric should not punish), with the paper each comes from.
"""
