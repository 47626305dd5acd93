"""A real Ray cluster started with ``ray start --head`` (one node, this machine), as README's "Run it on a cluster"
says: ``meta-eval run --engine ray`` with ``RAY_ADDRESS`` gives the numbers of ``--workers 1``; without
``RAY_AUTH_MODE=token`` (Ray's token authentication) the driver is refused with exit 2 and an error that names the fix.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require, require_module
from meta_eval.scoring.engines import RAY_HINT

# one pytest-xdist worker runs every test that starts Ray: a second local instance, or `ray stop --force`,
# on the same machine would meet the first
pytestmark = pytest.mark.xdist_group("ray")

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    require_module("ray", RAY_HINT)
    ray_cli = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")
    require(ray_cli, "the ray command", RAY_HINT)
    port = _free_port()
    started = subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                              "--disable-usage-stats"], capture_output=True, text=True, timeout=180, check=False)
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120, check=False)


def _run(shared_data, out: Path, env: dict, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", "run", "-j", "qags", "--subset", "cnndm", "-m", "chrf,bleu",
                           "-o", "ref=source", "--no-cache", "--data-dir", str(shared_data), "--output", str(out),
                           *flags], cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def one_process(shared_data, tmp_path_factory) -> dict:
    """The run's JSON with ``--workers 1``: the numbers every Ray run below must give."""
    out = tmp_path_factory.mktemp("one") / "one.json"
    one = _run(shared_data, out, {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}, "--workers", "1")
    assert one.returncode == 0, one.stderr[-2000:]
    return json.loads(out.read_text())


def test_a_started_cluster_scores_like_one_process_and_refuses_a_driver_without_the_token(head, one_process,
                                                                                         shared_data, tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    on_cluster = _run(shared_data, tmp_path / "ray.json", dict(base, RAY_ADDRESS=head, RAY_AUTH_MODE="token"),
                      "--engine", "ray")
    assert on_cluster.returncode == 0, on_cluster.stderr[-2000:]
    b = json.loads((tmp_path / "ray.json").read_text())
    assert one_process["results"] == b["results"] and one_process["n"] == b["n"] == 235
    refused = _run(shared_data, tmp_path / "refused.json", dict(base, RAY_ADDRESS=head), "--engine", "ray")
    assert refused.returncode == 2 and not (tmp_path / "refused.json").exists()
    assert "RAY_AUTH_MODE=token" in " ".join(refused.stderr.split())


def test_without_an_address_a_local_instance_of_its_own_not_the_running_cluster(head, one_process, shared_data,
                                                                                tmp_path):
    """Ray's own default (no address) joins the newest cluster `ray start` runs on the machine and then refuses a CPU
    count; meta-eval's ``--engine ray`` with no ``RAY_ADDRESS`` starts an instance of its own with ``--workers``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    local = _run(shared_data, tmp_path / "local.json", base, "--engine", "ray", "--workers", "2")
    assert local.returncode == 0, local.stderr[-2000:]
    b = json.loads((tmp_path / "local.json").read_text())
    assert one_process["results"] == b["results"] and b["n"] == 235
