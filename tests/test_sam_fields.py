"""biasaudit.theory.sam_fields: the reduced balanced fields and the two exact facts (linear loss, Euler step)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from biasaudit.claims.sam.flow import FLOW_EULER, FLOW_LINEAR
from biasaudit.ledger import Verdict, run_claim
from biasaudit.plumbing import InputError
from biasaudit.theory import sam_fields as sf
from biasaudit.theory.sam_fields import ALGORITHMS, discrete_step, reduced_field, sam_flow_on_linear_loss

CASES = [(alg, L, norm) for alg in ALGORITHMS for L in (1, 2, 3)
         for norm in (("joint", "layer") if alg == "l2" else ("joint",))]


def _balanced(Wsym, musym, depth, d):
    a = [sp.Symbol(f"a{j}", positive=True) for j in range(d)]
    sub = {Wsym[l, j]: a[j] for l in range(depth) for j in range(d)}
    T = sp.sqrt(sum((musym[j] * a[j] ** (depth - 1)) ** 2 for j in range(d)))
    return a, sub, T


@pytest.mark.parametrize("alg,L,norm", CASES)
def test_flow_linear_loss_symbolic_identity(alg, L, norm):
    """(1) exact: the SAM flow on -<beta, mu>, restricted to balanced states, is the reduced field."""
    d = 2
    Wsym, musym, field = sam_flow_on_linear_loss(alg, L, d, norm)
    a, sub, T = _balanced(Wsym, musym, L, d)
    expr = reduced_field(alg, L, norm).expr
    for l in range(L):
        for j in range(d):
            red = expr.subs({sf.w: a[j], sf.mu: musym[j], sf.T: T})
            assert sp.simplify(field[l, j].xreplace(sub) - red) == 0


@pytest.mark.parametrize("alg,L,norm", [c for c in CASES if c[1] <= 2])
def test_flow_euler_step_symbolic_identity(alg, L, norm):
    """(1) exact: one logistic SAM step = explicit Euler on the reduced field with h = eta sigma(-z~)."""
    d = 2
    Wsym, musym, eta, step, z_tilde = discrete_step(alg, L, d, norm)
    a, sub, T = _balanced(Wsym, musym, L, d)
    expr = reduced_field(alg, L, norm).expr
    h = eta / (1 + sp.exp(z_tilde.xreplace(sub)))
    for j in range(d):
        euler = h * expr.subs({sf.w: a[j], sf.mu: musym[j], sf.T: T})
        assert sp.simplify(step[0, j].xreplace(sub) - euler) == 0


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_flow_depth1_fields_equal_mu(alg):
    """(1) claim A: at depth 1 every reduced field is mu (sympy, both normalisations)."""
    for norm in ("joint", "layer"):
        assert sp.simplify(reduced_field(alg, 1, norm).expr - sf.mu) == 0


def test_flow_l2_normalisations_differ_by_sqrt_L():
    joint = reduced_field("l2", 3, "joint").expr
    layer = reduced_field("l2", 3, "layer").expr
    assert sp.simplify(joint - layer.subs(sf.rho, sf.rho / sp.sqrt(3))) == 0


@given(st.sampled_from(CASES), st.lists(st.floats(0.05, 2.0), min_size=1, max_size=4), st.floats(0.01, 0.9))
def test_flow_numpy_field_matches_direct_formula(case, ws, rho):
    """(2) the lambdified field against the formula written out in numpy."""
    alg, L, norm = case
    w = np.array(ws)
    mu = np.linspace(1.0, 2.0, w.size)
    got = reduced_field(alg, L, norm)(w, mu, rho)
    c = rho / np.sqrt(L) if norm == "joint" else rho
    if alg == "gd":
        want = mu * w ** (L - 1)
    elif alg == "linf":
        want = mu * (w - rho) ** (L - 1)
    else:
        want = mu * (w - c * mu * w ** (L - 1) / np.linalg.norm(mu * w ** (L - 1))) ** (L - 1)
    np.testing.assert_allclose(got, want, rtol=64 * np.finfo(float).eps, atol=0)


def test_flow_l2_zero_gradient_is_gd_field():
    """T = 0 (w = 0): eps = 0, the field is mu w^{L-1} = 0, never NaN."""
    out = reduced_field("l2", 2)(np.zeros(3), np.array([1.0, 2.0, 3.0]), 0.5)
    assert np.array_equal(out, np.zeros(3))


def test_flow_reduced_field_is_cached():
    assert reduced_field("l2", 2, "joint") is reduced_field("l2", 2, "joint")


@pytest.mark.parametrize("kwargs,param", [({"algorithm": "adam", "depth": 2}, "algorithm"),
                                          ({"algorithm": "gd", "depth": 0}, "depth"),
                                          ({"algorithm": "l2", "depth": 2, "normalization": "row"}, "normalization")])
def test_flow_reduced_field_rejects_bad_input(kwargs, param):
    with pytest.raises(InputError, match=f"^{param}:"):
        reduced_field(**kwargs)


@pytest.mark.parametrize("claim", [FLOW_EULER, FLOW_LINEAR], ids=lambda c: c.id)
def test_flow_exact_fact_claims_confirmed(claim):
    assert run_claim(claim).verdict is Verdict.CONFIRMED


@pytest.mark.parametrize("claim", [FLOW_EULER, FLOW_LINEAR], ids=lambda c: c.id)
def test_flow_exact_fact_claims_property(claim):
    """(3) property over the valid region, (4) the negative control fails on each example."""

    @given(claim.domain.strategy())
    def check(params):
        predicted = claim.predict(params)
        assert claim.evaluate(params, predicted).error <= claim.tolerance.value
        assert all(claim.controls_refuted_by(params, predicted))

    check()


def test_c_L_is_written_once():
    """rho/sqrt(L) lives in theory.sam_fields.effective_radius; every other layer imports it."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pattern = re.compile(r"rho\w*\s*/\s*(math|np|sp)\.sqrt\(\s*(L|depth)\b")
    owners = []
    for folder in ("theory", "numerics", "validation", "biasaudit"):
        for path in (root / folder).rglob("*.py"):
            if path.parent.name == "devtools":  # the mutation suite quotes the formula in order to break it
                continue
            if pattern.search(path.read_text(encoding="utf-8")):
                owners.append(path.relative_to(root).as_posix())
    assert owners == ["theory/sam_fields.py"], owners
