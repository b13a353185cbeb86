"""Scale-out: the same audit on a real Dask cluster (loopback) gives the local executor's records."""

import socket
import time
from pathlib import Path


from biasaudit.audit import AuditConfig, run_audit
from biasaudit.audit.units import TIMING_FIELDS
from biasaudit.cli import main

TOYS = ("test_audit_toyclaims",)


def without_timings(records):
    return [{k: v for k, v in r.items() if k not in (*TIMING_FIELDS, "sha256")} for r in records]


def test_audit_dask_localcluster_equals_local_executor(tmp_path):
    from distributed import LocalCluster

    local = run_audit(AuditConfig(out=tmp_path / "local", claims="toy.*", workers=1, figures=True,
                                  extra_modules=TOYS), quiet=True)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = run_audit(AuditConfig(out=tmp_path / "dask", claims="toy.*", executor="dask",
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
