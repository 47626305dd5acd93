"""Learning metric weights (Scialom et al. 2019, sec. 2.4): the ridge fit, splits and subset search
(:mod:`~meta_eval.learning.ridge`) and the job of ``meta-eval learn`` (:mod:`~meta_eval.learning.pipeline`)."""
