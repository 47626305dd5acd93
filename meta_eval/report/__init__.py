"""What meta-eval writes and shows: output files that never overwrite a user's (:mod:`~meta_eval.report.outputs`),
progress bars (:mod:`~meta_eval.report.progress`) and the printed tables (:mod:`~meta_eval.report.tables`)."""
