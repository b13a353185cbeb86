"""Toy claims for the audit tests (never registered in production).

The audit picks them up through ``BIASAUDIT_EXTRA_CLAIM_MODULES=test_audit_toyclaims`` (with ``tests/`` on
``sys.path``). ``BIASAUDIT_TOY_SLEEP`` (seconds per evaluation) makes them slow enough to kill midway.
Their truths are known: ``toy.square.*`` hold, ``toy.false`` is refuted, ``toy.raises`` raises (an
``error`` record), ``toy.undecided`` cannot be decided, and ``toy.object_prediction`` holds a function
in its prediction (a repr with a memory address).
"""

import os
import time

import sympy as sp

from biasaudit.domain import Domain, Real
from biasaudit.ledger import Claim, Observation, Tolerance, run_claim

x, y = sp.Symbol("x", positive=True), sp.Symbol("y")
N_SQUARES = 6


def _sleep():
    time.sleep(float(os.environ.get("BIASAUDIT_TOY_SLEEP", "0")))


def _square(params):
    return params["x"] ** 2


def _evaluate_square(params, predicted):
    _sleep()
    observed = params["x"] * params["x"]
    return Observation(observed, abs(predicted - observed) / observed, "x*x in float64")


def _evaluate_raises(params, predicted):
    raise RuntimeError("toy check exploded")


def _evaluate_undecided(params, predicted):
    return Observation(None, float("nan"), "toy numerics could not decide", decided=False)


def _claim(claim_id, predict=_square, evaluate=_evaluate_square, title="x squared",
           shift=lambda p, v: v * 1.01):
    return Claim(
        id=claim_id, paper="sam", source="toy §0", title=title, hypotheses=(sp.Gt(x, 0, evaluate=False),),
        statement=sp.Eq(y, x**2), predict=predict, evaluate=evaluate,
        tolerance=Tolerance("float64_roundoff", 4 * 2.0**-52, "one rounding of x*x"),
        domain=Domain({"x": Real(0.1, 10.0, log=True)}), negative_control=shift,
        samples={"ci": 3, "thorough": 6}, controls=1,
    )


def _predict_with_function(params):  # a prediction that holds an object: its repr has an address
    return {"value": params["x"] ** 2, "compare": lambda a, b: abs(a - b)}


def _evaluate_dict(params, predicted):
    observed = params["x"] * params["x"]
    return Observation(observed, abs(predicted["value"] - observed) / observed)


CLAIMS = (
    *(_claim(f"toy.square.{i}") for i in range(N_SQUARES)),
    _claim("toy.object_prediction", predict=_predict_with_function, evaluate=_evaluate_dict,
           title="a prediction holding a function", shift=lambda p, v: {**v, "value": v["value"] * 1.01}),
    _claim("toy.false", predict=lambda p: p["x"] ** 2 * (1 + 1e-6), title="x squared, off by 1e-6"),
    _claim("toy.raises", evaluate=_evaluate_raises, title="a check that raises"),
    _claim("toy.undecided", evaluate=_evaluate_undecided, title="a check that cannot decide"),
)


def test_toy_claims_have_their_known_verdicts():
    verdicts = {c.id: str(run_claim(c).verdict) for c in CLAIMS if c.id != "toy.raises"}
    assert verdicts["toy.square.0"] == "confirmed"
    assert verdicts["toy.false"] == "refuted"
    assert verdicts["toy.undecided"] == "undecided"


def _make_ok_figure(outdir, tier):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    path = outdir / "toy_line.png"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def _make_broken_figure(outdir, tier):
    raise ValueError("toy figure exploded")


def _figures():
    from biasaudit.figures import FigureJob

    return (
        FigureJob("toy.fig.ok", "sam", "a line", ("toy.square.*",), _make_ok_figure, caption="y = x."),
        FigureJob("toy.fig.broken", "sam", "a broken figure", ("toy.false",), _make_broken_figure),
        FigureJob("toy.fig.missing", "sam", "needs an API nobody wrote", ("toy.square.0",), _make_ok_figure,
                  requires=("biasaudit.ledger:no_such_function",)),
    )


FIGURES = _figures()
