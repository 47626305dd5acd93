"""One import namespace (issue 25, item 4): everything meta-eval installs is under ``meta_eval``, so a ``metrics.py``
(or ``judgments.py``, ``cli.py``) in a user's folder shadows nothing of meta-eval's; the plugin API's old name
``metrics`` is the same module as ``meta_eval.metrics`` unless the user has their own (meta_eval/_layout.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import WHEEL_FIX, can_build_wheels

REPO = Path(__file__).resolve().parents[1]
MAPPED = {"meta_eval": "meta_eval", "metrics": "meta_eval.metrics", "judgments": "meta_eval.judgments",
          "leaderboard": "meta_eval.leaderboard"}

# a user's folder with modules named like meta-eval's old top-level ones
CONFLICTS = {"metrics.py": "MINE = 'the user metrics.py'\n", "judgments.py": "MINE = 'the user judgments.py'\n",
             "cli.py": "MINE = 'the user cli.py'\n", "leaderboard.py": "MINE = 'the user leaderboard.py'\n"}

CHECK = """
import json, sys
from meta_eval import metrics as m, judgments as j
from meta_eval.cli import app
from meta_eval.leaderboard.render import render_readme
import metrics, judgments, cli, leaderboard
jset = j.load("chaganty", sys.argv[1])
scores = m.create("rouge").score(jset.examples()[:3])
print(json.dumps({"user": [metrics.MINE, judgments.MINE, cli.MINE, leaderboard.MINE], "rows": len(jset),
                  "rouge": len(scores["rougeL-f"]), "meta_eval": __import__("meta_eval").__file__,
                  "registered": "rouge" in m.names()}))
"""


def _expected_packages() -> set[str]:
    """Every folder under a mapped root that holds Python files or package data, as its installed package name."""
    out = set()
    for folder, package in MAPPED.items():
        for d in [REPO / folder, *sorted(p for p in (REPO / folder).rglob("*") if p.is_dir())]:
            if "__pycache__" in d.parts or (folder == "leaderboard" and d != REPO / folder):
                continue  # leaderboard/<set>/ are published boards, not code
            if any(f.suffix in (".py", ".toml", ".txt") for f in d.iterdir() if f.is_file()):
                rel = d.relative_to(REPO / folder).parts
                out.add(".".join((package, *rel)))
    return out


def test_pyproject_lists_every_package_under_meta_eval():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert set(config["packages"]) == _expected_packages()
    assert all(p == "meta_eval" or p.startswith("meta_eval.") for p in config["packages"])
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"meta-eval": "meta_eval.cli:main"}


def test_in_the_checkout_a_users_conflicting_modules_shadow_nothing(tmp_path, shared_data):
    for name, text in CONFLICTS.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-c", CHECK, str(shared_data)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    import json

    doc = json.loads(res.stdout)
    assert doc["user"] == ["the user metrics.py", "the user judgments.py", "the user cli.py",
                           "the user leaderboard.py"]
    assert doc["rows"] == 2085 and doc["rouge"] == 3 and doc["registered"]


def test_the_old_plugin_name_is_the_same_module_without_a_conflict(tmp_path):
    code = ("import meta_eval.metrics as new, metrics as old, metrics.base as old_base, meta_eval.metrics.base as b; "
            "print(old is new, old_base is b, old.Metric is new.Metric, old.register is new.register)")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True"] * 4
    # and from the checkout folder itself, where the old folder name is on the path: still one module
    res = subprocess.run([sys.executable, "-c", "import metrics, metrics.rouge as r, meta_eval.metrics.rouge as n; "
                          "print(r is n, metrics.get_class('rouge') is n.Rouge)"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "True"]


@pytest.mark.require(can_build_wheels(), "setuptools able to build a wheel (built without network)", WHEEL_FIX)
def test_the_wheel_installs_only_meta_eval_and_works_beside_conflicting_modules(tmp_path, shared_data):
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(wheels), str(REPO)], capture_output=True, text=True, timeout=600,
                           cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("meta_eval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"meta_eval", wheel.name.split("-py")[0] + ".dist-info"}
    assert {"meta_eval/cli.py", "meta_eval/metrics/rouge.py", "meta_eval/judgments/qags.py",
            "meta_eval/leaderboard/publish.py", "meta_eval/metrics/data/nltk_english_stopwords.txt",
            "meta_eval/protocols/sms-2019.toml"} <= set(names)
    assert not any(n.startswith("meta_eval/leaderboard/chaganty") for n in names)  # boards are not code
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "meta-eval = meta_eval.cli:main" in entry
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                              "--target", str(site), str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    user = tmp_path / "notebook"
    user.mkdir()
    for name, text in CONFLICTS.items():
        (user / name).write_text(text)
    res = subprocess.run([sys.executable, "-c", CHECK, str(shared_data)], cwd=user,
                         env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    import json

    doc = json.loads(res.stdout)
    assert doc["meta_eval"].startswith(str(site)) and doc["rows"] == 2085 and doc["registered"]
    assert doc["user"][0] == "the user metrics.py"


# --- one namespace of variant names (issue 36, item 2): built-in metrics, plugins and --scores files -------------

CLASHING_PLUGIN = '''
from meta_eval.metrics import Metric, register


@register("lengthy")
class Lengthy(Metric):
    """A plugin whose variant takes the name of one of ROUGE's."""
    variants = ("rouge1-f",)

    def _score(self, examples):
        return {"rouge1-f": [float(len(e.candidate)) for e in examples]}
'''


def _scores_file(path: Path, rows: int = 30) -> Path:
    import json

    path.write_text("".join(json.dumps({"id": f"r{i}", "score": i / rows}) + "\n" for i in range(rows)))
    return path


def _run_cli(args: list[str]):
    from typer.testing import CliRunner

    from meta_eval.cli import app
    from meta_eval.metrics import plugin_files

    try:
        return CliRunner().invoke(app, args)
    finally:
        plugin_files.unload_all()  # the registry of the other tests holds no plugin-file metric


def test_imported_scores_named_like_a_chosen_variant_are_refused_naming_both(tmp_path):
    from conftest import small_set

    data, scores = small_set(tmp_path / "s.jsonl"), _scores_file(tmp_path / "mine.jsonl")
    cache = tmp_path / "c.sqlite"
    done = _run_cli(["run", "-j", str(data), "-m", "rouge", "--scores", f"rouge1-f={scores}", "--cache", str(cache)])
    text = " ".join(done.output.split())
    assert done.exit_code == 2, done.output
    assert f"--scores rouge1-f ({scores}) clashes with the variant rouge1-f of the metric rouge (built-in)" in text
    assert f"rename it: --scores NEWNAME={scores}" in text and "Traceback" not in done.output
    assert not cache.exists()  # refused before anything was scored
    # another name is fine, and the two rows are both there
    out = tmp_path / "out.json"
    done = _run_cli(["run", "-j", str(data), "-m", "rouge", "--scores", f"mine={scores}", "--no-cache",
                     "--output", str(out)])
    assert done.exit_code == 0, done.output
    import json

    variants = {r["metric"] for r in json.loads(out.read_text())["results"]}
    assert {"rouge1-f", "mine"} <= variants


def test_a_plugin_variant_named_like_a_builtin_one_is_refused_when_both_run(tmp_path):
    from conftest import small_set

    data = small_set(tmp_path / "s.jsonl")
    plugin = tmp_path / "lengthy.py"
    plugin.write_text(CLASHING_PLUGIN)
    done = _run_cli(["run", "-j", str(data), "-m", "rouge,lengthy", "--plugin", str(plugin), "--no-cache"])
    text = " ".join(done.output.split())
    assert done.exit_code == 2, done.output
    assert (f"the variant rouge1-f of the metric lengthy (plugin file {plugin}) clashes with the variant rouge1-f of "
            "the metric rouge (built-in)") in text
    # the choice written in docs/plugins.md: only the run's own sources are compared
    done = _run_cli(["run", "-j", str(data), "-m", "lengthy", "--plugin", str(plugin), "--no-cache"])
    assert done.exit_code == 0, done.output
