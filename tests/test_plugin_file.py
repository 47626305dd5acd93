"""``--plugin FILE.py``: the metrics of a single Python file, registered without packaging
(metrics/plugin_files.py). An edited single-file metric is rescored, never served from the cache; the same file copied
elsewhere keeps its signature; every problem with the file is one line naming it (and the line); workers (a local
process pool, Ray) score its metrics without the file.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import conftest
from meta_eval.cli import app
from meta_eval.metrics import plugin_files, registry
from meta_eval.metrics.code_digest import code_digest, code_files
from meta_eval.metrics.plugin_files import PluginFileError, load_plugin_file

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

runner = CliRunner()

#: candidate length over first-reference length, in characters; records each process that imports it
PLUGIN = '''
import os

from meta_eval.metrics import Metric, register

with open(__file__ + ".pids", "a") as fh:  # which processes executed this file (the driver, workers)
    fh.write(f"{os.getpid()}\\n")


@register("mine")
class Mine(Metric):
    """Candidate length over first-reference length (characters)."""
    variants = ("mine",)
    needs_references = True

    def config(self):
        return {"unit": "chars"}

    def _score(self, examples):
        return {"mine": [len(e.candidate) / max(1, len(e.references[0])) for e in examples]}
'''


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _said(res) -> str:
    return " ".join(res.output.split())  # rich wraps long lines


def test_an_edited_plugin_file_is_rescored_an_unchanged_one_comes_from_the_cache(shared_data, tmp_path):
    plugin = _write(tmp_path / "f.py", PLUGIN)
    cache = tmp_path / "cache.sqlite"

    def run(name: str) -> tuple[dict, str]:
        out = tmp_path / f"{name}.json"
        res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plugin", str(plugin),
                                  "-m", "mine", "--cache", str(cache), "--output", str(out), "--workers", "1"])
        assert res.exit_code == 0, res.output
        return json.loads(out.read_text())["results"][0], _said(res)

    first, log = run("first")
    n = 2084  # chaganty's 2085 rows hold 2084 distinct texts
    assert first["metric"] == "mine" and f"mine: {n} computed, 0 from cache" in log
    sig = first["signature"]
    assert re.fullmatch(r"mine\|unit:chars\|meta-eval==[^|]+\|code:[0-9a-f]{12}", sig)
    assert sig.endswith(code_digest(registry.get_class("mine")))
    again, log = run("again")
    assert again["signature"] == sig and f"mine: 0 computed, {n} from cache" in log
    assert again["spearman"] == first["spearman"]
    # the scoring code edited, config() unchanged: a new signature, every text scored again, new numbers
    plugin.write_text(plugin.read_text().replace("len(e.candidate) /", "len(e.candidate.split()) /"))
    edited, log = run("edited")
    assert edited["signature"] != sig and f"mine: {n} computed, 0 from cache" in log
    assert edited["spearman"] != first["spearman"]


def test_score_command_gives_the_hand_computed_ratios(tmp_path):
    plugin = _write(tmp_path / "f.py", PLUGIN)
    rows = [("abcd", "ab"), ("abc", "abcdef"), ("", "xyz")]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"candidate": c, "references": [r]}) + "\n" for c, r in rows))
    out = tmp_path / "out.jsonl"
    res = runner.invoke(app, ["score", "-m", "mine", "-i", str(source), "--plugin", str(plugin), "--no-cache",
                              "--output", str(out)])
    assert res.exit_code == 0, res.output
    head, *scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert head["signatures"][0].startswith("mine|unit:chars|")
    assert [row["mine"] for row in scored] == [2.0, 0.5, 0.0]


def test_learn_and_publish_take_plugin_files(tmp_path):
    from meta_eval.leaderboard.publish import publish

    plugin = _write(tmp_path / "f.py", PLUGIN)
    data = conftest.small_set(tmp_path / "set.jsonl", rows=30)
    out = tmp_path / "learn.json"
    res = runner.invoke(app, ["learn", "--protocol", "paper", "-j", str(data), "-m", "mine", "--plugin", str(plugin),
                              "--splits", "5",
                              "--no-cache", "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["best"] == ["mine"]
    doc = publish([str(data)], tmp_path / "board", "mine", plugins=[plugin], no_cache=True, resamples=10,
                  workers=1, progress=False)
    assert f"--plugin {plugin}" in doc["command"]
    assert "mine|unit:chars|" in (tmp_path / "board" / "results.json").read_text()
    res = runner.invoke(app, ["run", "--protocol", "sms", "--plugin", str(plugin)])
    assert res.exit_code == 2 and "drop --plugin" in _said(res)


def test_metrics_lists_the_plugin_files_metrics(tmp_path):
    plugin = _write(tmp_path / "f.py", PLUGIN)
    res = runner.invoke(app, ["metrics", "--plugin", str(plugin)])
    assert res.exit_code == 0, res.output
    assert re.search(r"│ mine +│ mine +│ references +│ - +│ yes +│ ready", res.output)  # "-": no default model
    missing = runner.invoke(app, ["metrics", "--plugin", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_the_signature_covers_the_file_and_not_where_it_is(tmp_path):
    a = _write(tmp_path / "one" / "f.py", PLUGIN)
    b = tmp_path / "two" / "deeper" / "f.py"
    b.parent.mkdir(parents=True)
    shutil.copy(a, b)
    loaded = load_plugin_file(a)
    assert loaded.metrics == ("mine",) and loaded.path == a.resolve()
    cls = registry.get_class("mine")
    files = code_files(cls)
    assert files["f.py"] == a.read_bytes() and "metrics/base.py" in files
    assert not any(str(tmp_path) in name for name in files)  # names, never absolute paths
    first = registry.create("mine").signature()
    assert cls.__module__ == loaded.module and cls.__module__.startswith("meta_eval_plugin_file_f_")
    assert load_plugin_file(a) is loaded and registry.get_class("mine") is cls  # the same file again: a no-op
    a.write_text(a.read_text() + "\n# edited after loading\n")
    assert code_digest(cls) == first.rsplit(":", 1)[1]  # the bytes executed are digested, not the disk's
    plugin_files.unload_all()
    copied = load_plugin_file(b)
    assert copied.module != loaded.module  # another path, another module
    assert registry.create("mine").signature() == first  # the same bytes elsewhere: the same signature
    plugin_files.unload_all()
    load_plugin_file(a)  # the edited file: another signature
    assert registry.create("mine").signature() != first


def test_two_files_with_the_same_name_both_load(tmp_path):
    a = _write(tmp_path / "x" / "metric.py", PLUGIN)
    b = _write(tmp_path / "y" / "metric.py", PLUGIN.replace('"mine"', '"mine-too"'))
    found = plugin_files.load_plugin_files([a, b])
    assert [f.metrics for f in found] == [("mine",), ("mine-too",)]
    assert found[0].module != found[1].module and {"mine", "mine-too"} <= set(registry.names())
    assert registry.get_class("mine") is not registry.get_class("mine-too")


def test_a_file_written_with_the_old_metrics_name_loads(tmp_path):
    plugin = _write(tmp_path / "old.py", PLUGIN.replace("from meta_eval.metrics import", "from metrics import"))
    load_plugin_file(plugin)
    assert "metrics/base.py" in code_files(registry.get_class("mine"))
    from meta_eval.metrics import Example

    assert registry.create("mine").score([Example("abcd", ("ab",))])["mine"][0] == 2.0


@pytest.mark.parametrize("name, text, message", [
    ("syntax.py", "x = 1\ndef broken(:\n", r"plugin file \S+syntax\.py, line 2: SyntaxError: "),
    ("raises.py", "import os\n\nraise RuntimeError('no model file here')\n",
     r"plugin file \S+raises\.py, line 3: RuntimeError: no model file here$"),
    ("imports.py", "x = 1\nimport no_such_module_for_meta_eval\n",
     r"plugin file \S+imports\.py, line 2: ModuleNotFoundError: No module named 'no_such_module_for_meta_eval'$"),
    ("exits.py", "import sys\nsys.exit(3)\n", r"plugin file \S+exits\.py, line 2: called sys\.exit\(3\) while being "
                                              r"imported$"),
    ("nothing.py", "X = 1\n", r"plugin file \S+nothing\.py registers no metric: decorate a "),
    ("rouge.py", PLUGIN.replace('"mine"', '"rouge"'),
     r"plugin file \S+rouge\.py, line 10: RegistryError: metric name 'rouge' is already registered by "
     r"meta_eval\.metrics\.rouge\.Rouge; cannot register Mine \(plugin file \S+rouge\.py\) under the same name$"),
])
def test_a_bad_file_is_one_line_naming_it_and_the_line(name, text, message, tmp_path):
    plugin = _write(tmp_path / name, text)
    before = set(registry.names())
    with pytest.raises(PluginFileError) as caught:
        load_plugin_file(plugin)
    assert re.match(message, str(caught.value)), str(caught.value)
    assert "Traceback" not in str(caught.value) and "\n" not in str(caught.value)
    assert set(registry.names()) == before and plugin_files.loaded() == []  # nothing of it is kept


def test_what_a_failing_file_registered_before_failing_is_removed(tmp_path):
    plugin = _write(tmp_path / "half.py", PLUGIN + "\nraise ValueError('and then it fails')\n")
    with pytest.raises(PluginFileError, match=r"half\.py, line 2[0-9]: ValueError: and then it fails"):
        load_plugin_file(plugin)
    with pytest.raises(registry.UnknownMetricError):
        registry.get_class("mine")


def test_missing_and_non_python_files_and_a_clash_between_two_files(tmp_path):
    with pytest.raises(PluginFileError, match=r"plugin file \S+nope\.py does not exist$"):
        load_plugin_file(tmp_path / "nope.py")
    text = _write(tmp_path / "metric.txt", PLUGIN)
    with pytest.raises(PluginFileError, match=r"metric\.txt: not a Python file"):
        load_plugin_file(text)
    (tmp_path / "folder.py").mkdir()
    with pytest.raises(PluginFileError, match="is a folder, not a file"):
        load_plugin_file(tmp_path / "folder.py")
    a = _write(tmp_path / "a.py", PLUGIN)
    b = _write(tmp_path / "b.py", PLUGIN)
    load_plugin_file(a)
    with pytest.raises(PluginFileError) as caught:
        load_plugin_file(b)
    assert (f"metric name 'mine' is already registered by Mine (plugin file {a.resolve()}); cannot register Mine "
            f"(plugin file {b.resolve()})") in str(caught.value)
    assert registry.get_class("mine").__module__ == plugin_files.module_name(a.resolve())  # the first one stays


def test_the_command_line_fails_with_exit_2_and_one_line(shared_data, tmp_path):
    plugin = _write(tmp_path / "bad.py", "from meta_eval.metrics import Metric\n\n1 / 0\n")
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plugin", str(plugin),
                              "-m", "rouge", "--no-cache"])
    assert res.exit_code == 2
    assert re.search(r"error: plugin file \S+bad\.py, line 3: ZeroDivisionError: division by zero", _said(res))
    assert "Traceback" not in res.output


#: a second metric of the same file that runs in one process (a local driver, a Ray actor)
SINGLE = '''

@register("mine-single")
class MineSingle(Mine):
    """The same ratio, scored in one process (as a neural metric)."""
    variants = ("mine-single",)
    parallel = "single"

    def _score(self, examples):
        return {"mine-single": [len(e.candidate) / max(1, len(e.references[0])) for e in examples]}
'''


def _pids(plugin: Path) -> set[int]:
    return {int(x) for x in Path(str(plugin.resolve()) + ".pids").read_text().split()}


def _scores_on_workers(tmp_path, engine) -> None:
    """Score the plugin's metric of a deleted file on ``engine``: the workers execute the shipped source."""
    from meta_eval import task

    slow = PLUGIN.replace("    def _score(self, examples):\n", "    def _score(self, examples):\n"
                          "        import time\n\n        time.sleep(0.4)  # the driver cannot do it all alone\n")
    assert slow != PLUGIN
    plugin = _write(tmp_path / "f.py", slow + SINGLE)
    data = conftest.small_set(tmp_path / "set.jsonl", rows=39)  # 13 batches of 3
    alone = task.run(str(data), ["mine", "mine-single"], plugins=[plugin], no_cache=True, workers=1,
                     progress=False)
    os.remove(plugin)  # the workers never read it: its source travels with the metric
    spread = task.run(str(data), ["mine", "mine-single"], no_cache=True, batch_size=3, engine=engine, progress=False)
    assert spread.failed == [] and spread.not_run == []
    assert [r.as_dict() for r in spread.results] == [r.as_dict() for r in alone.results]
    assert {ms.metric: ms.signature for ms in spread.scores} == {ms.metric: ms.signature for ms in alone.scores}
    assert len(_pids(plugin)) >= 2  # executed in the driver and in at least one worker


def test_a_local_process_pool_scores_a_plugin_files_metric(tmp_path):
    from meta_eval.scoring.engines import LocalEngine

    with LocalEngine(2, start_after=0) as engine:  # the pool at once, however small the job
        _scores_on_workers(tmp_path, engine)


def test_ray_scores_a_plugin_files_metric_in_tasks_and_actors(tmp_path):
    from meta_eval.scoring.engines import RAY_HINT, make_engine

    conftest.require_module("ray", RAY_HINT)
    with make_engine("ray", workers=2) as engine:
        _scores_on_workers(tmp_path, engine)


def test_a_name_that_is_another_metrics_variant_is_refused_and_rouge_like_names_keep_their_variants(tmp_path,
                                                                                                   shared_data):
    """-m rouge1-f chooses ROUGE's variant: a plugin may not take that word for itself (it silently replaced
    ROUGE's rouge1-f); and the default that hides ROUGE's precision and recall hides only ROUGE's, not those of a
    plugin whose names start with "rouge"."""
    clash = _write(tmp_path / "r1.py", '''
        from meta_eval.metrics import Metric, register


        @register("rouge1-f")
        class Mine(Metric):
            variants = ("my-r1",)
            needs_references = False

            def _score(self, examples):
                return {"my-r1": [float(len(e.candidate)) for e in examples]}
        ''')
    with pytest.raises(PluginFileError, match=r"metric name 'rouge1-f' is a variant of rouge \(meta_eval\.metrics"
                                              r"\.rouge\.Rouge\), which -m rouge1-f chooses"):
        load_plugin_file(clash)
    assert "rouge1-f" not in registry.names()
    we = _write(tmp_path / "we.py", '''
        from meta_eval.metrics import Metric, register


        @register("rouge-we")
        class RougeWe(Metric):
            variants = ("rouge-we-p", "rouge-we-r", "rouge-we-f")
            needs_references = False

            def _score(self, examples):
                n = [float(len(e.candidate)) for e in examples]
                return {"rouge-we-p": n, "rouge-we-r": [-x for x in n], "rouge-we-f": [x * x for x in n]}
        ''')
    out = tmp_path / "r.json"
    try:
        res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plugin", str(we),
                                  "-m", "rouge-we,rouge", "--limit", "40", "--resamples", "10", "--no-cache",
                                  "--output", str(out)])
    finally:
        plugin_files.unload_all()
    assert res.exit_code == 0, res.output
    shown = [r["metric"] for r in json.loads(out.read_text())["results"]]
    assert {"rouge-we-p", "rouge-we-r", "rouge-we-f", "rouge1-f"} <= set(shown) and "rouge1-p" not in shown


EXITS = '''
import sys

from meta_eval.metrics import Metric, register


@register("exits")
class Exits(Metric):
    """Calls sys.exit(0) while scoring."""
    variants = ("exits",)
    needs_references = True

    def _score(self, examples):
        sys.exit(0)
'''


def test_a_metric_that_calls_sys_exit_fails_alone_and_the_run_exits_1(shared_data, tmp_path):
    """sys.exit(0) in a plugin's scoring ended the run with exit 0, no table, no --output and no error."""
    plugin = _write(tmp_path / "exits.py", EXITS)
    out = tmp_path / "o.json"
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plugin", str(plugin),
                              "-m", "exits,rouge", "--limit", "40", "--resamples", "20", "--no-cache",
                              "--output", str(out)])
    assert res.exit_code == 1, res.output
    assert "it called sys.exit(0) while scoring" in _said(res) and "Traceback" not in res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [f["metric"] for f in doc["failed"]] == ["exits"]
    assert {r["metric"] for r in doc["results"]} >= {"rouge1-f", "rougeL-f"}


def test_a_variant_named_like_a_row_column_of_a_score_file_is_refused(shared_data, tmp_path):
    """A plugin variant named ``system`` overwrote each row's system in ``--scores-out`` (and its CSV repeated the
    column), so the file could not be read back (audit, session 38): such names are refused when registered, and as
    ``--scores`` names."""
    plugin = _write(tmp_path / "keyvar.py", "from meta_eval.metrics import Metric, register\n\n\n"
                    "@register('keyvar')\nclass KeyVar(Metric):\n    needs_references = False\n"
                    "    variants = ('system', 'source')\n\n    def config(self):\n        return {}\n\n"
                    "    def _score(self, examples):\n        return {v: [1.0] * len(examples) for v in self.variants}\n")
    res = runner.invoke(app, ["run", "-j", "chaganty", "--data-dir", str(shared_data), "--plugin", str(plugin),
                              "-m", "keyvar", "--no-cache", "--scores-out", str(tmp_path / "kv.jsonl")])
    assert res.exit_code == 2, res.output
    assert "the variant name(s) system, source are the row columns of a score file" in _said(res)
    assert not (tmp_path / "kv.jsonl").exists()
    assert set(registry.RESERVED_VARIANTS) >= {"id", "index", "doc_id", "system"}
    from meta_eval.errors import MetaEvalError
    from meta_eval.scoring.imported import _KEYS, _ROW_FIELDS, parse_spec

    assert set(_KEYS) | set(_ROW_FIELDS) == set(registry.RESERVED_VARIANTS)  # one list of what a variant may not be
    with pytest.raises(MetaEvalError, match="'system' is a row column of a score file"):
        parse_spec("system=s.jsonl")
