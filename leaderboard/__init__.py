"""Published leaderboards: building and writing a board (:mod:`~meta_eval.leaderboard.publish`), its pages
(:mod:`~meta_eval.leaderboard.render`), the index of all boards (:mod:`~meta_eval.leaderboard.index`) and the
JUDGE-BENCH board (:mod:`~meta_eval.leaderboard.judge_board`)."""

#: ``meta-eval leaderboard``'s option help (kept here, without imports, so that the command line stays a thin shell).
HELP = {
    "probe_judgments": "The files the board's sets were published from, where a set is not a built-in one "
                       "(comma-separated .jsonl or .json files; a board records a set's name, never a local path)",
}
