"""The README is the front door (issue 26): short, its links lead somewhere, and its Python example runs."""
from __future__ import annotations

import re
import runpy
from pathlib import Path

import conftest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_is_a_front_door_whose_links_exist():
    assert len(README.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links, "the README points to the documentation"
    for target in links:
        if "://" not in target:
            assert (REPO / target).exists(), target
    docs = {p.name for p in (REPO / "docs").glob("*.md")}
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert all(name in nav for name in docs)  # every page is in the site's navigation


def test_the_readme_python_example_runs(shared_data, tmp_path, monkeypatch):
    conftest.require_module("matplotlib", "pip install 'meta-eval[plot]'")
    conftest.require_module("pandas", "pip install 'meta-eval[plot]'")
    block = README.split("<!-- README example: executed by tests/test_readme.py -->", 1)[1]
    code = re.search(r"```python\n(.*?)```", block, re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("META_EVAL_DATA", str(shared_data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the default score cache, kept out of $HOME
    namespace = runpy.run_path(str(script))
    res = namespace["res"]
    assert (tmp_path / "chaganty.png").read_bytes()[:4] == b"\x89PNG"
    assert res.level == "system" and "4 systems" in res.level_warning
    assert set(namespace["ranks"]) <= set(res.values) and min(namespace["ranks"].values()) == 1
