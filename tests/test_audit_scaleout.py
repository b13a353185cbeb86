"""Scale-out: the same audit on a real Dask cluster (loopback) gives the local executor's records."""

import socket
import time
from pathlib import Path


from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.audit.units import TIMING_FIELDS
from biasaudit.cli import main

TOYS = ("test_audit_toyclaims",)


def without_timings(records):
    return [{k: v for k, v in r.items() if k not in (*TIMING_FIELDS, "hmac_sha256")} for r in records]


def test_audit_dask_localcluster_equals_local_executor(tmp_path):
    from distributed import LocalCluster

    local = execute_audit(AuditConfig(out=tmp_path / "local", claims="toy.*", workers=1, figures=True,
                                  extra_modules=TOYS), quiet=True)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = execute_audit(AuditConfig(out=tmp_path / "dask", claims="toy.*", executor="dask",
                                       scheduler=cluster.scheduler_address, figures=True,
                                       extra_modules=TOYS), quiet=True)
    assert without_timings(remote.records) == without_timings(local.records)
    assert {f["figure_id"]: f["status"] for f in remote.figures} == \
        {f["figure_id"]: f["status"] for f in local.figures}
    assert (tmp_path / "dask" / "figures" / "toy.fig.ok" / "toy_line.png").is_file()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_audit_unreachable_scheduler_is_a_clear_error_within_seconds(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_EXTRA_CLAIM_MODULES", ",".join(TOYS))
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    code = main(["audit", "--claims", "toy.*", "--out", str(tmp_path), "--executor", "dask",
                 "--scheduler", address, "--quiet"])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("biasaudit: error: scheduler: no Dask scheduler answered within")
    assert address in err and "Traceback" not in err
    assert elapsed < 15
    assert not (Path(tmp_path) / "evidence.jsonl").exists()  # no work was done


# ----------------------------------------------------------------------------- run units
RUN_TOYS = ("test_audit_toyruns",)


def _run_audit(tmp_path, name, monkeypatch, **kw):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / f"cache-{name}"))
    return execute_audit(AuditConfig(out=tmp_path / name, claims="toy.runs.*", figures=False, extra_modules=RUN_TOYS,
                                 **kw), quiet=True)


def test_run_units_are_scheduled_once_each_and_counted(tmp_path, monkeypatch):
    result = _run_audit(tmp_path, "local", monkeypatch, workers=1)
    assert [r["verdict"] for r in result.records] == ["confirmed", "confirmed"]
    # 7 run units (six squares, then the total) for 2 claims: more units than claims, each run once
    assert result.run_units == 7 and result.ran == 2 + 7
    assert result.runs_computed == 7  # the claims found every run cached
    assert result.runs_reused > 0 and all(r["runs"]["computed"] == 0 for r in result.records)
    again = execute_audit(AuditConfig(out=tmp_path / "again", claims="toy.runs.*", figures=False,
                                  extra_modules=RUN_TOYS, workers=1), quiet=True)
    assert again.runs_computed == 0 and again.runs_reused >= 7  # the same cache: nothing recomputed
    report = (tmp_path / "again" / "report.md").read_text()
    assert "experiment runs: 0 computed" in report


def test_run_units_on_a_two_worker_dask_localcluster_give_the_local_evidence(tmp_path, monkeypatch):
    from distributed import LocalCluster

    local = _run_audit(tmp_path, "local", monkeypatch, workers=1)
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache-dask"))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None, resources={"GPU": 1}) as cluster:
        remote = execute_audit(AuditConfig(out=tmp_path / "dask", claims="toy.runs.*", executor="dask",
                                       scheduler=cluster.scheduler_address, figures=False, extra_modules=RUN_TOYS,
                                       run_resources=(("GPU", 1),)), quiet=True)
    assert without_timings(remote.records) == without_timings(local.records)
    assert remote.run_units == 7 and remote.ran > len(remote.records)
    assert remote.runs_computed == 7 and not remote.run_errors


def test_run_resources_are_checked_before_any_work(tmp_path, capsys):
    for args, why in ((["--run-resources", "GPU=1"], "applies to --executor dask only"),
                      (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--run-resources", "GPU"],
                       "must be NAME=N")):
        assert main(["audit", "--claims", "toy.*", "--out", str(tmp_path), *args]) == 2
        err = capsys.readouterr().err
        assert "run-resources" in err and why in err


def test_status_lines_replace_the_unit_bar_field_instead_of_printing(tmp_path):
    import io

    from biasaudit.audit.progress import AuditProgress

    stream = io.StringIO()
    progress = AuditProgress(1, stream=stream, bars=False)
    progress.event(("start", "run:x", "run toy", 1))
    progress.event(("status", "run:x", "waiting for another process holding /c/.lock ..."))
    progress.close()
    assert stream.getvalue().count("\n") == 1 and "run toy: waiting for another process" in stream.getvalue()


def test_a_unit_s_status_lines_become_status_events_and_a_failed_run_is_an_error_record():
    from biasaudit.audit.units import RunUnit, execute, set_reporter

    events = []
    set_reporter(events.append)
    try:
        ok = execute(RunUnit("s", "run s", "biasaudit.plumbing.status:status", ("waiting for a lock ...",)))
        bad = execute(RunUnit("b", "run b", "biasaudit.plumbing.status:no_such_runner"))
    finally:
        set_reporter(None)
    assert ("status", "run:s", "waiting for a lock ...") in events
    assert ok["status"] == "ok" and ok["runs"] == {"computed": 0, "reused": 0, "repeated": 0}
    assert bad["status"] == "error" and "no_such_runner" in bad["detail"]
