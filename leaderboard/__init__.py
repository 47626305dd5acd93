"""Published leaderboards: building and writing a board (:mod:`~meta_eval.leaderboard.publish`), its pages
(:mod:`~meta_eval.leaderboard.render`), the index of all boards (:mod:`~meta_eval.leaderboard.index`) and the
JUDGE-BENCH board (:mod:`~meta_eval.leaderboard.judge_board`)."""

#: ``meta-eval leaderboard``'s option help (kept here, without imports, so that the command line stays a thin shell).
HELP = {
    "resamples": "Resamples of every bootstrap interval (the human ceilings' too) and of every permutation test; "
                 "not the 1,000 permutations behind each system pair's p-value inside SPA, which are fixed (WMT24's; "
                 "perm:1000 in the signature)",
    "force": "Replace the leaderboard in --out, or write into a non-empty folder that meta-eval did not write (files "
             "named like the board's are replaced, in figures/ too); never over an input of the board",
    "scores": "NAME=FILE (one set) or SET/NAME=FILE (SET as given to -j, e.g. wmt23:en-de/mine=FILE): an imported "
              "metric on the board, as `meta-eval run --scores` reads it (NAME:lower=FILE when lower is better); a "
              "metric named in -m needs a file for every set",
    "probe_judgments": "The files the board's sets were published from, where a set is not a built-in one "
                       "(comma-separated .jsonl or .json files; a board records a set's name, never a local path)",
}
