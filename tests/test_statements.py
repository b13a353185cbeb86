"""What the reader sees is what runs: every theory claim's statement is built from the theory formulas its
prediction evaluates, or the claim says in words why its prediction has no closed form.

For each theory claim: the formulas it names (``Claim.formulas``) each appear verbatim (as a sympy
subexpression) in its statement, and evaluating ``predict`` on a sampled case calls each of them (traced by
:func:`biasaudit.theory.formula.traced`). Claims without a closed form are listed here by name; each gives its
reason (``Claim.no_closed_form``) and names no formula.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from biasaudit.ledger import OutOfScope, claim_seed
from biasaudit.registry import all_claims
from biasaudit.theory.formula import Formula, traced

THEORY = [c for c in all_claims() if c.kind == "theory" and c.defined_in.startswith("biasaudit.")]

# predictions computed by bisection, integration, optimisation or simulation: no closed form to show
NO_CLOSED_FORM: set[str] = {
    # paper 1 (sam): each claim's no_closed_form says why, in words
    "sam.depth1.svm_direction",
    "sam.depth1.svm_direction_linf",
    "sam.depth1.linf_simultaneous_sliding",
    "sam.linf.chatter_bound",
    "sam.linf.limit_rule_L2",
    "sam.flow.linear_loss",
    "sam.flow.paper_normalization",
    "sam.discrete.balance_preserved",
    "sam.discrete.zero_coordinate_invariant",
    "sam.discrete.flow_limit",
    "sam.l2.log_linear_reduction",
    "sam.l2.certificates",
    "sam.l2.alpha_collapse",
    "sam.l2.alpha_collapse_scale_invariance",
    "sam.l2.regime1_collapse",
    "sam.l2.monotone_in_alpha",
    "sam.l2.nonmonotone_in_tau",
    "sam.l2.asymptotics",
    "sam.l2.slowdown_near_alpha_c_only",
    "sam.l2.discrete_vs_flow",
    "sam.l2.discrete_trajectory_tracking",
    "sam.l2.discrete_separatrix_shift",
    "sam.l2.deep_even_alpha_collapse",
    "sam.l2.deep_L3_sequences",
    # eos: read off GD simulations (sweeps, paths, fits to them) or numbers measured on the toy
    "eos.s_gf.large_init_continuous", "eos.gd.kink_fixed_point", "eos.gd.projected_monotone",
    "eos.gd.float64_vs_mpmath", "eos.gd.d2_endpoints_on_front", "eos.gd.d3_not_pareto", "eos.gd.d3_excess_9pct",
    "eos.gd.toy_numbers",
    # eos: the central flow's endpoint is the end of an integration, GD's a simulation
    "eos.central_flow.gd_endpoint", "eos.central_flow.gd_endpoint_near_edge", "eos.central_flow.gd_endpoint_large_eta",
    "eos.central_flow.norm_curve",
    # implementation cross-checks: a numba kernel's output against its plain reference's (biasaudit.claims.crosscheck)
    "sam.discrete.kernel_matches_reference", "sam.discrete.kernel_matches_symbolic_step",
    "sam.discrete.divergence_matches_reference", "sam.flow.integrator_matches_reference",
    "sam.l2.heatmap_rk4_matches_reference", "sam.l2.classify_matches_reference", "sam.l2.heatmap_methods_agree",
    "sam.l2.reduction_matches_mpmath", "sam.l2.alpha_collapse_matches_mpmath", "sam.l2.switch_times_matches_mpmath",
    "eos.gd.sweep_matches_reference", "eos.central_flow.kernel_matches_reference",
}


def contains(statement, expr) -> bool:
    """Whether ``expr`` is a subexpression of ``statement`` (sympy trees compared structurally)."""
    return any(node == expr for node in sp.preorder_traversal(statement))


def _traced_predict(claim, tries: int = 8) -> list:
    rng = np.random.default_rng(claim_seed(claim.id, 0))
    for _ in range(tries):
        params = claim.domain.sample(rng)
        try:
            with traced() as seen:
                claim.predict(params)
        except OutOfScope:
            continue
        return seen
    pytest.fail(f"{claim.id}: no sampled case in scope")


@pytest.mark.parametrize("claim", THEORY, ids=lambda c: c.id)
def test_statement_shows_the_formulas_its_prediction_evaluates(claim):
    if claim.id in NO_CLOSED_FORM:
        assert claim.no_closed_form.strip() and not claim.formulas, claim.id
        return
    assert claim.formulas, f"{claim.id}: names no theory formula (and is not listed as having no closed form)"
    missing = [f.name for f in claim.formulas if not contains(claim.statement, f.expr)]
    assert missing == [], f"{claim.id}: the statement does not show {missing}"
    called = {id(f) for f in _traced_predict(claim)}
    unused = [f.name for f in claim.formulas if id(f) not in called]
    assert unused == [], f"{claim.id}: predict never evaluates {unused}"


def test_no_closed_form_list_names_registered_theory_claims():
    assert NO_CLOSED_FORM <= {c.id for c in THEORY}


def test_the_containment_check_sees_a_retyped_formula():
    a, b = sp.symbols("a b", positive=True)
    formula = Formula("f", a * sp.exp(b), (a, b))
    assert contains(sp.Eq(sp.Symbol("w"), formula.expr), formula.expr)
    retyped = sp.Symbol("a", real=True) * sp.exp(b)  # same text, other assumptions: another symbol
    assert not contains(sp.Eq(sp.Symbol("w"), retyped), formula.expr)
    assert not contains(sp.Eq(sp.Symbol("w"), 1.01 * formula.expr), formula.expr)


def test_tracing_records_the_formulas_called():
    a = sp.Symbol("a")
    f, g = Formula("f", a + 1, (a,)), Formula("g", 2 * a, (a,))
    with traced() as seen:
        f(1.0)
    assert seen == [f] and f(2.0) == 3.0 and g not in seen
