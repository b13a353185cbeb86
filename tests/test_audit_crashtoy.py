"""A check that kills its own worker process: the audit records it and finishes the other claims."""

import multiprocessing
import os
import signal
from pathlib import Path

import sympy as sp

from biasaudit.audit import AuditConfig, execute_audit
from biasaudit.domain import Domain, Real
from biasaudit.ledger import Claim, Observation, Tolerance

x = sp.Symbol("x", positive=True)


def _evaluate_crash(params, predicted):
    if multiprocessing.current_process().name != "MainProcess":  # never kill the test process itself
        os.kill(os.getpid(), signal.SIGKILL)
    return Observation(predicted, 0.0)


CLAIMS = (
    Claim(id="crash.worker", paper="sam", source="toy", title="a check whose worker dies",
          hypotheses=(), statement=sp.Eq(x, x), predict=lambda p: p["x"], evaluate=_evaluate_crash,
          tolerance=Tolerance("exact", 0.0, "identity"), domain=Domain({"x": Real(0.1, 1.0)}),
          negative_control=lambda p, v: v * 1.01, samples={"ci": 1, "thorough": 1}, controls=1),
)


def test_audit_worker_crash_is_an_error_record_and_the_rest_runs(tmp_path):
    config = AuditConfig(out=Path(tmp_path), claims="crash.*,toy.square.*", workers=2, figures=False,
                         extra_modules=("test_audit_toyclaims", "test_audit_crashtoy"))
    result = execute_audit(config, quiet=True)
    records = {r["claim_id"]: r for r in result.records}
    assert records["crash.worker"]["verdict"] == "error"
    assert "worker process died" in records["crash.worker"]["detail"]
    assert all(records[f"toy.square.{i}"]["verdict"] == "confirmed" for i in range(6))
