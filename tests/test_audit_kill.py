"""Kill -9 an audit midway, resume it, and get exactly the evidence of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.audit.store import EvidenceStore, folder_key
from biasaudit.audit.units import TIMING_FIELDS

TESTS = Path(__file__).resolve().parent
TOYS = ("test_audit_toyclaims",)


def without_timings(records):
    return [{k: v for k, v in r.items() if k not in (*TIMING_FIELDS, "hmac_sha256")} for r in records]


def cli(out, *extra, sleep="0"):
    env = dict(os.environ, BIASAUDIT_EXTRA_CLAIM_MODULES=",".join(TOYS), BIASAUDIT_TOY_SLEEP=sleep,
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "biasaudit", "audit", "--claims", "toy.*", "--out", str(out), "--workers", "1",
           "--no-figures", *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def count_lines(path):
    try:
        return sum(1 for line in path.read_bytes().split(b"\n") if line.strip())
    except FileNotFoundError:
        return 0


def test_audit_sigkill_midway_then_resume_equals_uninterrupted_run(tmp_path):
    uninterrupted = execute_audit(AuditConfig(out=tmp_path / "clean", claims="toy.*", workers=1, figures=False,
                                          extra_modules=TOYS), quiet=True)
    out = tmp_path / "killed"
    evidence = out / "evidence.jsonl"
    proc = cli(out, sleep="0.15")  # 4 evaluations per toy claim: ~0.6 s a claim
    deadline = time.monotonic() + 60
    while count_lines(evidence) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the audit never wrote evidence"
        time.sleep(0.02)
    time.sleep(0.3)  # somewhere inside the next claim
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    store = EvidenceStore(evidence, "claim_id", required=("verdict", "profile", "seed"), secret=folder_key(out))
    assert store.load() == []  # every line on disk is a complete record
    n_done = len(store.records)
    assert 2 <= n_done < len(uninterrupted.records)
    assert not (out / "report.md").exists()  # the killed run never reached its report

    resumed = cli(out, "--resume")
    stdout, stderr = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, stderr
    assert stderr.count("kept from evidence") == n_done
    final = [json.loads(line) for line in evidence.read_text().splitlines()]
    assert [r["claim_id"] for r in final] == [r["claim_id"] for r in uninterrupted.records]
    assert without_timings(final) == without_timings(uninterrupted.records)
    assert (out / "index.html").is_file() and (out / "report.md").is_file()


def _children(pid):
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_audit_pool_workers_exit_when_the_audit_is_killed(tmp_path):
    out = tmp_path / "killed"
    proc = cli(out, "--workers", "2", sleep="0.3")
    workers = []
    deadline = time.monotonic() + 60
    while count_lines(out / "evidence.jsonl") < 1:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert len(workers) >= 2
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    deadline = time.monotonic() + 15
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), "orphaned worker processes kept running"
