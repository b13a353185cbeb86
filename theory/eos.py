"""Paper 2 ("Conflicting Biases at the Edge of Stability") theory, re-exported in one place.

The model and its Hessian live in :mod:`biasaudit.theory.eos_model`, the minimizers/Pareto front/stable minima in
:mod:`biasaudit.theory.eos_minimizers`, the gradient flow, s_GF, η_c and :func:`eos_regimes` in :mod:`biasaudit.theory.eos_flow`,
and the risk in :mod:`biasaudit.theory.eos_risk`.
"""

from biasaudit.theory.eos_flow import (EosRegimes, eos_regimes, gf_tau, gradient_flow_limit,
                                       kl_potential, s_gf, small_alpha_exponent)
from biasaudit.theory.eos_minimizers import (d2_beta_of_sharpness, deep_min_sharpness_beta, deep_sharpness, min_l2_beta,
                                             min_norm_face, min_norm_solution, min_norm_stable_eta_max,
                                             min_sharpness_face, min_sharpness_solution, minimizers_disjoint,
                                             pareto_breakpoints, pareto_front, stable_eta_max)
from biasaudit.theory.eos_model import EosProblem, eos_problem, hessian, hessian_eigenvalues, on_manifold_sharpness
from biasaudit.theory.eos_risk import bayes_optimal_beta, bayes_risk, d2_vertex_risk_ratio, u_shape_condition

__all__ = [
    "EosProblem", "EosRegimes", "bayes_optimal_beta", "bayes_risk", "d2_beta_of_sharpness", "d2_vertex_risk_ratio",
    "deep_min_sharpness_beta", "deep_sharpness", "eos_problem", "eos_regimes", "gf_tau",
    "gradient_flow_limit", "hessian", "hessian_eigenvalues", "kl_potential", "min_l2_beta", "min_norm_face",
    "min_norm_solution", "min_norm_stable_eta_max", "min_sharpness_face", "min_sharpness_solution",
    "minimizers_disjoint", "on_manifold_sharpness", "pareto_breakpoints", "pareto_front", "s_gf",
    "small_alpha_exponent", "stable_eta_max", "u_shape_condition",
]
