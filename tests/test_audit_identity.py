"""Evidence identity on a real network claim family: an audit killed midway and resumed, and the same audit on
a Dask cluster whose workers train in threads, give the records of one uninterrupted local audit, every field but
the signature and the timings.

The family: paper 2's plateau and tracking claims on the theory model as a torch network (their 80 GD and
gradient-flow runs, read by the same statistics as the networks') and the central-flow positive control, which
computes its runs inside the claim. Each audit trains from an empty cache of its own, so the runs themselves
must come out the same in another process, after a kill, or beside another thread.

Three causes of difference this guards, each with a test of its own below: a claim's record holding wall
times; process state (torch's thread count, the CPU's flush of denormals) left by whatever ran before in a
worker; and models seeded from torch's global generator while another thread draws from it.
"""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.audit.units import TIMING_FIELDS, RunUnit, execute
from biasaudit.plumbing import jsonable
from biasaudit.plumbing.jsoncache import cached_json, read_json
from biasaudit.validation.device import flush_denormal_enabled, torch_settings

FAMILY = "eos.torch.e1.*.diag,eos.torch.central_flow.diag"
N_CLAIMS = 3
N_RUNS = 80  # 8 gradient-flow proxies, then 72 GD runs


def without_signature_and_timings(records):
    return [{k: v for k, v in r.items() if k not in (*TIMING_FIELDS, "hmac_sha256")} for r in records]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("identity")
    before = os.environ.get("BIASAUDIT_CACHE_DIR")
    os.environ["BIASAUDIT_CACHE_DIR"] = str(root / "cache-clean")
    try:
        result = execute_audit(AuditConfig(out=root / "clean", claims=FAMILY, workers=2, figures=False), quiet=True)
    finally:
        if before is None:
            os.environ.pop("BIASAUDIT_CACHE_DIR")
        else:
            os.environ["BIASAUDIT_CACHE_DIR"] = before
    assert len(result.records) == N_CLAIMS and result.run_units == N_RUNS
    assert all(r["verdict"] in ("confirmed", "refuted", "undecided") for r in result.records), result.records
    return result.records


def _cached_runs(cache: Path) -> int:
    return sum(1 for _ in cache.rglob("*.json")) if cache.is_dir() else 0


def test_network_family_killed_midway_and_resumed_equals_uninterrupted(uninterrupted, tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "killed"
    env = dict(os.environ, BIASAUDIT_CACHE_DIR=str(cache))
    cmd = [sys.executable, "-m", "biasaudit", "audit", "--claims", FAMILY, "--out", str(out), "--workers", "2",
           "--no-figures", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _cached_runs(cache) < 30:  # some proxies and GD runs done, most not
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the audit never cached a run"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "report.md").exists()

    resumed = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    final = [json.loads(line) for line in (out / "evidence.jsonl").read_text().splitlines()]
    assert [r["claim_id"] for r in final] == [r["claim_id"] for r in uninterrupted]
    assert without_signature_and_timings(final) == without_signature_and_timings(uninterrupted)


def test_network_family_on_a_threaded_dask_cluster_equals_local(uninterrupted, tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    # two threads per worker: two runs train at once in one process (the default of `dask worker`)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        remote = execute_audit(AuditConfig(out=tmp_path / "dask", claims=FAMILY, executor="dask",
                                           scheduler=cluster.scheduler_address, figures=False), quiet=True)
    assert remote.run_units == N_RUNS and remote.runs_computed >= N_RUNS
    assert without_signature_and_timings(remote.records) == without_signature_and_timings(uninterrupted)


# ----------------------------------------------------------------------------- the causes, one by one
def test_a_record_computed_here_reads_as_the_same_record_read_from_the_cache(tmp_path):
    def compute():
        return {"pair": (1, np.int64(2)), "x": np.float64(0.1), "loss": float("nan"), "inf": math.inf}

    computed = cached_json(tmp_path / "r.json", compute, key="k", encode=jsonable)
    reread = cached_json(tmp_path / "r.json", compute, key="k", encode=jsonable)
    assert computed == reread == read_json(tmp_path / "r.json")
    assert computed["pair"] == [1, 2] and computed["loss"] == "nan"  # as written, not as computed


def test_central_flow_runs_hold_no_wall_times():
    from biasaudit.claims.eos.torch.central_flow import seed_run

    run = seed_run("toy", 0)

    def keys(x):
        if isinstance(x, dict):
            for k, v in x.items():
                yield k
                yield from keys(v)
        elif isinstance(x, list):
            for v in x:
                yield from keys(v)
    assert not [k for k in keys(run) if "second" in k]


def probe_state(path: str) -> None:
    """A run unit's runner: write torch's thread count and the flush of denormals as this unit sees them."""
    Path(path).write_text(json.dumps([torch.get_num_threads(), flush_denormal_enabled()]))


def test_every_unit_starts_from_the_same_process_state(tmp_path):
    unit = RunUnit("probe", "probe", f"{__name__}:probe_state", (str(tmp_path / "state.json"),))

    def state_after(threads, flush):
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        torch.set_flush_denormal(flush)
        try:
            assert execute(unit)["status"] == "ok"
            assert (torch.get_num_threads(), flush_denormal_enabled()) == (threads, flush)  # restored after it
        finally:
            torch.set_flush_denormal(False)
            torch.set_num_threads(before)
        return json.loads((tmp_path / "state.json").read_text())

    assert state_after(3, True) == state_after(2, False) == [1, False]


def test_torch_settings_nests_and_restores_what_was_there():
    before = torch.get_num_threads()
    torch.set_flush_denormal(True)
    try:
        with torch_settings(flush_denormal=False):
            assert torch.get_num_threads() == 1 and not flush_denormal_enabled()
            with torch_settings(3):
                assert torch.get_num_threads() == 3 and flush_denormal_enabled()
            assert torch.get_num_threads() == 1 and not flush_denormal_enabled()
        assert flush_denormal_enabled() and torch.get_num_threads() == before
    finally:
        torch.set_flush_denormal(False)


def test_torch_settings_in_one_thread_leaves_another_threads_count_alone():
    """A Dask worker runs several units in threads of one process: one unit's block must not change the thread
    count under another's feet (the count is per thread, as the flush is)."""
    before = torch.get_num_threads()
    inside, release, seen = threading.Event(), threading.Event(), []

    def other():
        with torch_settings(1):
            inside.set()
            release.wait(10)
            seen.append(torch.get_num_threads())

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with torch_settings(3):
        seen.append(torch.get_num_threads())
    release.set()
    t.join()
    assert seen == [3, 1] and torch.get_num_threads() == before


def test_models_built_in_concurrent_threads_get_their_own_seeds():
    from biasaudit.validation.gd_trainer import make_problem
    from biasaudit.validation.models import make_model

    X = np.random.default_rng(0).standard_normal((20, 1, 8, 8))
    y = np.arange(20) % 10

    def fcn(seed):
        return make_problem("fcn", "mse", X.reshape(20, -1), y, X.reshape(20, -1), y, num_classes=10,
                            seed=seed).theta_init

    def cnn(seed):
        m = make_model("cnn", num_classes=10, in_channels=1, image_size=8, width=8, seed=seed)
        return torch.cat([p.detach().flatten() for p in m.parameters()])

    for build in (fcn, cnn):
        serial = {s: build(s) for s in range(6)}
        for _ in range(5):
            out = {}
            threads = [threading.Thread(target=lambda s=s: out.__setitem__(s, build(s))) for s in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert all(torch.equal(out[s], serial[s]) for s in serial), build.__name__
