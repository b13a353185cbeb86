"""Toy experiment claims that declare run units (never registered in production).

Picked up through ``BIASAUDIT_EXTRA_CLAIM_MODULES=test_audit_toyruns`` (``tests/`` on ``sys.path``). Six
runs each cache i² under ``$BIASAUDIT_CACHE_DIR/toy-runs``; a seventh (``total``, after the six) caches their
sum. ``toy.runs.each`` reads the six, ``toy.runs.total`` reads the total: both declare the runs, which the
audit schedules once each. A claim whose run is missing computes it itself (as the real experiments do), so
the verdicts do not depend on whether the runs went first. ``BIASAUDIT_TOY_RUN_SLEEP`` (seconds per run)
makes the runs slow enough to time a speed-up.
"""

import json
import os
import time

import sympy as sp

from biasaudit.domain import Domain, Fixed
from biasaudit.ledger import Claim, Observation, Tolerance, run_claim
from biasaudit.plumbing import atomic_write_text, cache_root
from biasaudit.plumbing.runcache import count_run

N_RUNS = 6
_MODULE = __name__


def _path(name):
    return cache_root() / "toy-runs" / f"{name}.json"


def _cached(name, compute):
    path = _path(name)
    if path.is_file():
        count_run(computed=False)
        return json.loads(path.read_text())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(value))
    count_run(computed=True)
    return value


def toy_run(i: int) -> int:
    def compute():
        time.sleep(float(os.environ.get("BIASAUDIT_TOY_RUN_SLEEP", "0")))
        return i * i
    return _cached(f"square-{i}", compute)


def toy_total() -> int:
    return _cached("total", lambda: sum(toy_run(i) for i in range(N_RUNS)))


def runs():
    from biasaudit.audit.units import RunUnit

    squares = tuple(RunUnit(f"toy-square-{i}", f"run toy square {i}", f"{_MODULE}:toy_run", (i,))
                    for i in range(N_RUNS))
    total = RunUnit("toy-total", "run toy total", f"{_MODULE}:toy_total", (),
                    after=tuple(u.run_id for u in squares))
    return (*squares, total)


def _claim(claim_id, evaluate, predict):
    return Claim(
        id=claim_id, paper="sam", source="toy §runs", title=claim_id, hypotheses=(),
        statement=sp.Eq(sp.Symbol("S"), sp.Integer(55)), predict=predict, evaluate=evaluate,
        tolerance=Tolerance("exact_integer", 0.0, "integers"), domain=Domain({"n": Fixed(N_RUNS)}),
        negative_control=lambda p, v: v + 1, kind="experiment", samples={"ci": 1, "thorough": 1}, controls=1,
        runs=runs,
    )


CLAIMS = (
    _claim("toy.runs.each", lambda p, v: Observation(sum(toy_run(i) for i in range(p["n"])),
                                                     abs(sum(toy_run(i) for i in range(p["n"])) - v)),
           lambda p: sum(i * i for i in range(p["n"]))),
    _claim("toy.runs.total", lambda p, v: Observation(toy_total(), abs(toy_total() - v)),
           lambda p: sum(i * i for i in range(p["n"]))),
)


def test_toy_run_claims_are_confirmed(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path))
    assert [str(run_claim(c).verdict) for c in CLAIMS] == ["confirmed", "confirmed"]
