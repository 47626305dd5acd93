"""What the built-in judgment sets hold, for listings (``meta-eval judgments``): one entry per set, from its files
in the data folder, or the problems with those files (missing, corrupt) without raising."""
from __future__ import annotations

import importlib
from pathlib import Path

__all__ = ["catalog"]


def catalog(data_dir: str | Path | None = None) -> list[dict]:
    """Per built-in set: ``name``, ``task``, ``subset`` (the default) and ``subsets``, ``rows``, ``documents``,
    ``systems``, ``dimensions`` (the default first), ``sources`` (bool), ``references`` (the most per row),
    ``annotators``, ``licence``, ``data_source``; or ``problems`` (file: reason) when its files are missing or
    corrupt (nothing is downloaded). The ``judge-bench`` entry holds its files instead, under ``sets``
    (:func:`judgments.judge_bench.catalog_entry`: per file its rows, licence, raters and properties with their human
    agreement), and the files not found under ``missing``."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.judgments.files import verify_all

    root = judgment_sets.data_dir(data_dir)
    entries = []
    for name, module_name in judgment_sets.BUILTIN.items():
        module = importlib.import_module(module_name)
        if hasattr(module, "catalog_entry"):
            entries.append(module.catalog_entry(root))
            continue
        files = [v for v in vars(module).values() if type(v).__name__ == "DataFile"]
        problems = verify_all(files, root)
        subsets = tuple(getattr(module, "SUBSETS", ()) or ())
        if problems:
            entries.append({"name": name, "subsets": subsets,
                            "problems": [f"{f.relpath}: {p}" for f, p in problems]})
            continue
        jset = judgment_sets.load(name, root, download=False)
        entries.append({"name": name, "task": jset.task, "subset": jset.subset, "subsets": subsets,
                        "rows": len(jset), "documents": jset.documents(), "systems": len(jset.systems()),
                        "dimensions": [jset.default_dimension] + [d for d in jset.dimensions
                                                                  if d != jset.default_dimension],
                        "sources": jset.has_sources, "references": jset.max_references,
                        "annotators": jset.annotators, "licence": jset.licence, "data_source": jset.data_source,
                        "problems": []})
    return entries
