"""meta-eval: which automatic text-evaluation metric agrees best with people.

One import namespace: ``meta_eval.metrics`` (the metric registry and metrics), ``meta_eval.judgments`` (human-judgment
sets), ``meta_eval.leaderboard`` (published boards), ``meta_eval.cli`` (the ``meta-eval`` command) and the
meta-evaluation itself in the subpackages of ``meta_eval`` (see :mod:`meta_eval._layout` for how the folders at the
repository's root are found under these names).

Importing ``meta_eval`` is cheap: no numpy-heavy statistics, pandas, matplotlib or torch until they are used.
"""
from meta_eval import _layout

_layout.install()
