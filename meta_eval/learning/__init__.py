"""Learning metric weights (Scialom et al. 2019, sec. 2.4): the ridge fit, splits and subset search
(:mod:`~meta_eval.learning.ridge`) and the job of ``meta-eval learn`` (:mod:`~meta_eval.learning.pipeline`)."""

#: ``meta-eval learn``'s option help (kept here, without imports, so that the command line stays a thin shell).
HELP = {
    "target": "A human dimension, or geomean:dimA,dimB (each rescaled to [1, 2], then their geometric mean) "
              "\\[default: the set's default dimension]",
    "protocol": "nested (outer folds by document; features and alpha chosen inside each training part only; a "
                "bootstrap interval and paired tests) or paper (Scialom et al.'s repeated random halves, alpha fixed, "
                "the feature set chosen on the splits it is reported on: optimistic)",
    "folds": "nested: outer folds (by document) \\[default: 5]",
    "inner_folds": "nested: inner folds that choose the features and alpha inside each outer training part (one per "
                   "document where a part holds fewer; the output says so) \\[default: 5]",
    "alphas": "nested: comma-separated ridge strengths to choose from \\[default: 0.01,0.1,1,10,100,1000]",
    "resamples": "nested: bootstrap resamples (of documents) behind the interval and the paired tests, at least 10 "
                 "\\[default: 1000]",
    "baseline": "nested: the variant the learned metric is tested against besides the best single feature "
                "\\[default: rougeL-f when it is a feature]",
    "alpha": "paper: ridge penalty on the standardised weights \\[default: 1, the paper's]",
    "splits": "paper: random train/held-out splits per protocol \\[default: 1000]",
    "search_splits": "paper: splits that screen feature sets during a search (the first N of the seeded splits); the "
                     "finalists are evaluated on all --splits \\[default: 100]",
    "train_fraction": "paper: share of documents (grouped) or rows (ungrouped) used for fitting in each split "
                      "\\[default: 0.5]",
    "search": "auto (exhaustive if there are at most 1,024 subsets, else greedy), exhaustive (every subset), greedy "
              "(forward selection), or none (the full feature set only)",
    "max_size": "Largest feature set (exhaustive: subsets up to this size; greedy: stop at this size)",
    "min_gain": "Greedy: add a feature only if it raises the mean held-out correlation by more than this",
    "correlation": "Held-out correlation: spearman, pearson or kendall",
    "save": "Save the final model (the procedure run on all rows) as NAME (then usable as --metrics learned:NAME; "
            "stored in $META_EVAL_HOME/learned or the user data dir) or as a path ending in .json",
    "allow_in_sample": "Test a learned:NAME metric scored on rows its model was fitted on like any other (by default "
                       "its p-values are withheld: an in-sample correlation is not held-out)",
}
