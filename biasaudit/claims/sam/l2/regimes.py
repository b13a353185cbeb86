r"""The regimes of l2-SAM at L = 2 and their boundaries: regime 1 collapse below α_c
(``sam.l2.regime1_collapse``), monotone growth above α_grow (``sam.l2.alpha_grow``), GD-like regime 3
(``sam.l2.regime3``) and sequential regime 2 (``sam.l2.regime2_sequential``), against the independent full flow.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from biasaudit.claims.sam.l2._common import (PAPER, SEQ_RTOL, _alpha_c, _arr, _base, _c, _flow, _flow_outcome,
                                             _r2_alpha, _reduction, _regimes, _seq_grid, _sequence)
from biasaudit.domain import Domain, Real
from biasaudit.ledger import (AT_10X_EXACT, AT_10X_PRECISION, Claim, Control, Observation, Reference, Tolerance,
                              broken_hypothesis, shifted_prediction)
from biasaudit.theory import sam_l2 as theory

SYM = theory.SYMBOLS  # the symbols the statements are written in

_L, _alpha, _alpha_c_s, _tau = SYM["L"], SYM["alpha"], SYM["alpha_c"], SYM["tau"]

__all__ = ["CLAIMS"]


# ========================================================================== regime 1: collapse
R1_RESOLUTION = 2e-3  # regime 1 is also checked at α_c(1 ∓ 0.2 %): collapse just below, escape just above


def _r1_evaluate(p, predicted):
    """At α = α_c(1 − below): β → 0 in finite τ with the loss rising to ln 2 (DOP853 to S = 1e−10 cμ₁). At
    α_c(1 ∓ 0.2 %): the full flow collapses below and escapes above, so a wrong α_c is refuted on either side."""
    from scipy.integrate import solve_ivp

    from biasaudit.theory.sam_l2 import rescaled_field_l2

    mu, c = _arr(p), _c(p)
    ac = float(predicted["alpha_c"])
    grid = np.linspace(0.0, 80.0 / mu[0], 400)
    edges = tuple(_flow_outcome(mu, c, ac * (1 + sign * R1_RESOLUTION), grid) for sign in (-1, 1))
    if "none" in edges:
        return Observation(edges, math.nan, "full flow undecided near alpha_c", decided=False)
    edge_err = float(edges[0] != "collapse") + float(edges[1] != "escape")
    alpha = ac * (1 - p["below"])
    w0 = np.full(mu.size, alpha)

    def tiny(t, w):
        return np.linalg.norm(mu * w) - 1e-10 * c * mu[0]

    def escaped(t, w):
        return np.max(w) - 2 * c

    tiny.terminal = escaped.terminal = True
    T = 200.0 / mu[0]
    sol = solve_ivp(lambda t, w: rescaled_field_l2(np.maximum(w, 0.0), mu, c), (0, T), w0, method="DOP853",
                    rtol=1e-11, atol=1e-18 * c, events=(tiny, escaped))
    if sol.t_events[1].size:  # escaped where regime 1 was predicted: a counterexample, not an undecided run
        return Observation("escape", math.inf, f"alpha = alpha_c (1 - {p['below']:.3g}) escaped (max w = 2c at "
                                               f"tau = {sol.t[-1]:.4g}); near alpha_c: {edges}")
    if sol.status != 1:
        return Observation("no collapse", math.nan, f"beta did not reach 0 by tau = {T}", decided=False)
    margin = float(mu @ sol.y[:, -1] ** 2)
    loss = math.log1p(math.exp(-margin))
    err = abs(loss - predicted["loss"]) + edge_err
    return Observation(loss, err, f"S = 1e-10 c mu_1 at finite tau = {sol.t[-1]:.4g}; loss there {loss:.15f}; "
                                  f"full flow at alpha_c (1 -/+ 0.2%): {edges}")


REGIME1 = Claim(
    id="sam.l2.regime1_collapse", paper=PAPER, source="C (regime 1)",
    title="alpha < alpha_c: beta → 0 in finite tau and the loss rises to ln 2 (and alpha_c is where that stops: "
          "collapse at alpha_c(1 − 0.2%), escape at alpha_c(1 + 0.2%))",
    hypotheses=(sp.Lt(_alpha, _alpha_c_s, evaluate=False),),
    statement=sp.Eq(sp.Limit(SYM["loss(tau)"], _tau, SYM["tau_star"]), sp.log(2)),
    no_closed_form="alpha_c has no closed form (a certificate-driven bisection, numerics.l2_boundaries); the loss "
                   "ln 2 at the collapse is a constant",
    predict=lambda p: {"alpha_c": _alpha_c(p), "loss": math.log(2.0)}, evaluate=_r1_evaluate,
    tolerance=Tolerance("loss_at_S_tiny", 1e-12,
                        "at S = 1e-10 c mu_1 the margin is < 1e-20, so the loss is ln 2 up to roundoff; a "
                        "wrong class at alpha_c(1 -/+ 0.2%) adds 1", at_10x=AT_10X_PRECISION),
    domain=Domain(_base(below=Real(1e-4, 0.5, log=True))),
    slack_reason=("at S = 1e-10 c mu_1 the margin is below 1e-20, so log1p(exp(-margin)) is ln 2 to the bit: the error "
                  "is 0 by construction, or at least 1 for a wrong class at alpha_c(1 -/+ 0.2 %)"),
    negative_control=(*shifted_prediction(0.01, key="alpha_c"),
                      broken_hypothesis("loss", lambda p, pred: (p, {**pred, "loss": 0.0}))),  # escape's loss
    samples={"ci": 5, "thorough": 40},
)


# ========================================================================== alpha_grow
def _grow_predict(p):
    mu = _arr(p)
    return theory.ALPHA_GROW(_c(p), float(mu[-1]), float(np.linalg.norm(mu)))


GROW_RESOLUTION = 2e-3  # below the prediction, α_grow is checked at α = α_grow(1 − 0.2 %)


def _grow_evaluate(p, predicted):
    """Above α_grow (×(1 + 1e−6) and ×(1 + above)): every growth rate ≥ 0 along the full flow and j† never
    decreases. Below (×(1 − 0.2 %)): the full flow's major coordinate w_d must shrink at first."""
    mu, c = _arr(p), _c(p)
    worst, decreases = math.inf, 0
    for factor in (1 + 1e-6, 1 + p["above"]):
        alpha = predicted * factor
        grid = _seq_grid(mu, c, np.full(mu.size, alpha))
        ref = _flow(mu, np.full(mu.size, alpha), c, grid)
        S = np.exp(ref.log_S)
        rates = mu[None, :] * (1 - c * mu[None, :] / S[:, None])  # (ln w_j)' along the reference trajectory
        worst = min(worst, float(np.min(rates)))
        jd = np.argmax(ref.log_w, axis=1) + 1
        decreases += int(np.sum(np.diff(jd) < 0))
    below = predicted * (1 - GROW_RESOLUTION)
    early = np.linspace(0.0, 0.1 / mu[-1], 11)
    first = _flow(mu, np.full(mu.size, below), c, early).log_w[:, -1]
    shrinks = bool(first[1] < first[0])
    err = max(0.0, -worst) / mu[-1] + decreases + (0.0 if shrinks else 1.0)
    return Observation(worst, err, f"min growth rate above {worst:.3e}; j† decreases {decreases} times; at "
                                   f"alpha_grow(1 - 0.2%) w_d {'shrinks' if shrinks else 'does not shrink'} at first")


ALPHA_GROW = Claim(
    id="sam.l2.alpha_grow", paper=PAPER, source="C (alpha_grow)",
    title="above alpha_grow = c mu_d/‖mu‖ every coordinate grows monotonically and j† is nondecreasing in tau; "
          "just below it (alpha_grow(1 − 0.2%)) the major coordinate shrinks at first",
    hypotheses=(sp.Ge(_alpha, theory.ALPHA_GROW.expr, evaluate=False),),
    statement=theory.ALPHA_GROW.eq(SYM["alpha_grow"]),
    formulas=(theory.ALPHA_GROW,),
    predict=_grow_predict, evaluate=_grow_evaluate,
    tolerance=Tolerance("sign_roundoff", 1e-12, "growth rates ≥ 0 exactly; roundoff of 1 − c mu_d/S is ~eps; a "
                                                "missing shrink below, or a j† decrease, adds 1",
                        at_10x=AT_10X_PRECISION),
    domain=Domain(_base(above=Real(1e-3, 1.0, log=True))),
    slack_reason=("the error is the most negative growth rate clipped at 0 plus whole units for a wrong order or a "
                  "missing shrink: exactly 0 whenever the statement holds; 1e-12 absorbs roundoff of 1 - c mu_d/S at "
                  "its zero"),
    negative_control=shifted_prediction(0.01),
    references=(Reference({"d": 2, "mu": (1.0, 2.0), "rho": 1.0, "normalization": "joint", "above": 0.1}, 0.632,
                          5e-4 / 0.632,
                          "alpha_grow = 0.632 rho at mu = (1, 2)", origin="derived"),),
    samples={"ci": 4, "thorough": 32},
)


# ========================================================================== regime 3
def _r3_predict(p):
    mu = _arr(p)
    return theory.ALPHA_GD_LIKE(_c(p), float(mu[-2]), float(mu[-1]), float(np.linalg.norm(mu)))


def _r3_evaluate(p, predicted):
    mu, c = _arr(p), _c(p)
    d = mu.size
    res = {}
    for name, factor in (("above", 1.005), ("below", 0.995)):
        alpha = np.full(d, predicted * factor)
        grid = _seq_grid(mu, c, alpha)
        res[name] = _sequence(np.argmax(_flow(mu, alpha, c, grid, SEQ_RTOL).log_w, axis=1) + 1)
    err = float(res["above"] != (d,)) + float(res["below"] == (d,))
    return Observation(res, err, f"j† sequences at 1.005 and 0.995 x alpha_R3: {res}")


REGIME3 = Claim(
    id="sam.l2.regime3", paper=PAPER, source="C (regime 3, GD-like)",
    title="j†(tau) = d for all tau > 0 iff alpha ≥ c(mu_{d−1} + mu_d)/‖mu‖",
    hypotheses=(sp.Eq(_L, 2),),
    statement=theory.ALPHA_GD_LIKE.eq(SYM["alpha_R3"]),
    formulas=(theory.ALPHA_GD_LIKE,),
    predict=_r3_predict, evaluate=_r3_evaluate,
    tolerance=Tolerance("exact_sequence", 0.0, "a j† sequence matches or not", at_10x=AT_10X_EXACT),
    domain=Domain(_base()),
    negative_control=shifted_prediction(0.01),
    references=(Reference({"d": 2, "mu": (1.0, 2.0), "rho": 1.0, "normalization": "joint"}, 0.949, 5e-4 / 0.949,
                          "alpha_R3 = 0.949 rho at mu = (1, 2)", origin="derived"),),
    samples={"ci": 4, "thorough": 32},
)


# ========================================================================== regime 2
def _r2_predict(p):
    """The j† sequence (exact reduction) and j†(0+) from the closed form argmax_j μ_j(1 − cμ_j/(α‖μ‖)): minor
    first, i.e. j†(0+) < d, throughout regime 2."""
    from biasaudit.theory.sam_l2 import jdagger_uniform

    mu, c = _arr(p), _c(p)
    alpha = np.full(mu.size, _r2_alpha(p))
    sequence = _sequence(_reduction(mu, alpha, c, _seq_grid(mu, c, alpha)).j_dagger)
    first = int(jdagger_uniform(mu, c, alpha[0] * float(np.linalg.norm(mu))))
    return {"sequence": sequence, "first": first}


def _r2_evaluate(p, predicted):
    mu, c = _arr(p), _c(p)
    alpha = np.full(mu.size, _r2_alpha(p))
    ref = _flow(mu, alpha, c, _seq_grid(mu, c, alpha), SEQ_RTOL)
    obs = _sequence(np.argmax(ref.log_w, axis=1) + 1)
    escaped = bool((ref.status == 1).any())
    sequential = len(obs) >= 2 and obs[-1] == mu.size
    minor_first = obs[0] == predicted["first"] < mu.size
    err = (float(tuple(predicted["sequence"]) != obs) + float(not escaped) + float(not sequential)
           + float(not minor_first))
    return Observation(obs, err, f"full-flow j† sequence {obs} (predicted {tuple(predicted['sequence'])}, first "
                                 f"{predicted['first']}), escaped={escaped}")


def _r2_across(boundary: str, factor: float):
    """α moved 1 % across a regime-2 boundary, the regime-2 prediction kept."""
    def make(p, pred):
        r = _regimes(p)
        return {**p, "alpha": getattr(r, boundary) * factor}, pred
    return make


REGIME2 = Claim(
    id="sam.l2.regime2_sequential", paper=PAPER, source="C (regime 2)",
    title="alpha_c < alpha < alpha_R3: sequential amplification, minor first: j† starts at the minor index "
          "argmax_j mu_j(1 − c mu_j/(alpha‖mu‖)) < d and moves up to d",
    hypotheses=(sp.Lt(_alpha_c_s, _alpha, evaluate=False), sp.Lt(_alpha, SYM["alpha_R3"], evaluate=False),
                sp.Eq(SYM["H"], _alpha * SYM["norm_mu"])),  # at tau = 0+, H = tau/A = S(0) = alpha ||mu||
    statement=sp.And(sp.Eq(SYM["j_dagger(0+)"], SYM["argmax"](theory.JDAGGER_UNIFORM.expr)),
                     sp.Lt(SYM["j_dagger(0+)"], SYM["d"]), sp.Eq(SYM["j_dagger(inf)"], SYM["d"])),
    formulas=(theory.JDAGGER_UNIFORM,),
    predict=_r2_predict, evaluate=_r2_evaluate,
    tolerance=Tolerance("exact_sequence", 0.0, "a j† sequence matches or not", at_10x=AT_10X_EXACT),
    domain=Domain(_base(u=Real(0.02, 0.98))),
    negative_control=(
        Control("+", 0.01, "alpha across alpha_R3", _r2_across("alpha_gd_like", 1.01)),
        Control("-", 0.01, "alpha across alpha_c", _r2_across("alpha_collapse", 0.99)),
    ),
    notes="negative controls: alpha moved 1 % across each boundary of regime 2 with the regime-2 prediction kept "
          "(above alpha_R3 the run is GD-like, below alpha_c it collapses)",
    samples={"ci": 4, "thorough": 32},
)


CLAIMS = (
    REGIME1, ALPHA_GROW, REGIME3, REGIME2,
)
