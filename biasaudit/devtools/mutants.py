"""The mutants of the mutation suite: plausible bugs, each a one-place text edit of the installed package.

A :class:`Mutant` replaces ``old`` by ``new`` in one file (``old`` must occur exactly once; a test keeps the
list from rotting as the code moves) and names the claims that can see it: ``claims`` are globs over the
*theory* claims (a paper's whole set, never a hand-picked killer), ``experiments`` are experiment claims
run by id (the cheap pipeline claims; the network trainings are out of the suite's time budget).

Paths are relative to the installed ``biasaudit`` package: ``theory/…`` is ``biasaudit.theory``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mutant", "MUTANTS", "SAM", "EOS", "ALL"]

SAM = ("sam.*",)
EOS = ("eos.*",)
ALL = ("*",)
SAM_PIPELINE = ("sam.torch.diag_net_matches_numerics",)
EOS_PIPELINE = ("eos.torch.sharpness_vs_dense",)


@dataclass(frozen=True)
class Mutant:
    """One plausible bug: in the package file ``path``, ``old`` (which must occur exactly once) becomes ``new``. ``bug``
    names the mistake; ``claims`` (globs over theory claims) and ``experiments`` (experiment claim ids) are the claims
    run against it."""

    name: str
    path: str  # inside the package: "theory/eos_flow.py", "ledger.py"
    old: str
    new: str
    bug: str  # the mistake it models
    claims: tuple[str, ...] = ()  # globs over theory claims
    experiments: tuple[str, ...] = ()  # experiment claim ids

    @property
    def layer(self) -> str:
        """The layer of the edited file: ``theory``, ``numerics``, ``validation`` or ``front door``."""
        head = self.path.split("/", 1)[0]
        return head if head in ("theory", "numerics", "validation") else "front door"


MUTANTS: tuple[Mutant, ...] = (
    # ---- theory: SAM (paper 1) ------------------------------------------------------------------------
    Mutant("sam.alpha_grow_x1.01", "theory/sam_l2.py",
           'Formula("alpha_grow", c * mu_d / norm_mu,', 'Formula("alpha_grow", 1.01 * c * mu_d / norm_mu,',
           "threshold alpha_grow = c mu_d/||mu|| off by 1 %", SAM),
    Mutant("sam.alpha_grow_x0.99", "theory/sam_l2.py",
           'Formula("alpha_grow", c * mu_d / norm_mu,', 'Formula("alpha_grow", 0.99 * c * mu_d / norm_mu,',
           "threshold alpha_grow off by -1 %", SAM),
    Mutant("sam.alpha_gd_like_x0.99", "theory/sam_l2.py",
           'Formula("alpha_gd_like", c * (mu_dm1 + mu_d) / norm_mu,',
           'Formula("alpha_gd_like", 0.99 * c * (mu_dm1 + mu_d) / norm_mu,',
           "regime-3 threshold c(mu_{d-1} + mu_d)/||mu|| off by -1 %", SAM),
    Mutant("sam.c_L_at_depth", "theory/sam_fields.py",
           "return rho_value / np.sqrt(depth)", "return rho_value / np.sqrt(2)",
           "c_L = rho/sqrt(L) frozen at its L = 2 value (wrong at L >= 3)", SAM),
    Mutant("sam.jacobian_index_swap", "theory/sam_l2.py",
           'Formula("jacobian_other", mu_j * (1 - mu_j / mu_k),', 'Formula("jacobian_other", mu_j * (1 - mu_k / mu_j),',
           "index swap in the fixed point's Jacobian", SAM),
    Mutant("sam.jdagger_zero_based", "theory/sam_l2.py",
           "return np.argmax(JDAGGER_UNIFORM(np.asarray(mu, float), c_value, H_value), axis=-1) + 1",
           "return np.argmax(JDAGGER_UNIFORM(np.asarray(mu, float), c_value, H_value), axis=-1)",
           "j-dagger (uniform alpha) returned 0-based", SAM),
    Mutant("sam.deep_parity_flip", "theory/sam_l2.py",
           '(-1) ** (L - 1) * c ** (L - 1) * mu_j**L', '(-1) ** L * c ** (L - 1) * mu_j**L',
           "the sign (-1)^(L-1) of the small-alpha deep field off by one power", SAM),
    Mutant("sam.gd_blowup_L_minus_1", "theory/sam_gd.py",
           'Formula("gd_blowup_time", alpha ** (2 - L) / ((L - 2) * mu),',
           'Formula("gd_blowup_time", alpha ** (2 - L) / ((L - 1) * mu),',
           "GD blow-up time with (L - 1) for (L - 2)", SAM),
    Mutant("sam.linf_zero_hit_factor_2", "theory/sam_linf.py",
           "LINF_ZERO_HIT = sp.log(rho / (rho - alpha)) / mu", "LINF_ZERO_HIT = sp.log(rho / (rho - alpha)) / (2 * mu)",
           "a factor 2 in the l_inf-SAM zero-hit time", SAM),
    Mutant("sam.linf_deep_score_power", "theory/sam_linf.py",
           'Formula("linf_deep_score", mu * (alpha - rho) ** (L - 2),',
           'Formula("linf_deep_score", mu * (alpha - rho) ** (L - 1),',
           "the deep l_inf-SAM limit score with power L - 1 for L - 2", SAM),
    Mutant("sam.unbalanced_rho", "theory/sam_linf.py",
           "UNBALANCED_SUM = 2 * rho + (s0 - 2 * rho) * sp.exp(mu * tau)",
           "UNBALANCED_SUM = rho + (s0 - rho) * sp.exp(mu * tau)",
           "unbalanced l_inf-SAM: growth threshold rho instead of 2 rho", SAM),
    # ---- theory: EoS (paper 2) ------------------------------------------------------------------------
    Mutant("eos.eta_c_div_1.01", "theory/eos_flow.py",
           "eta_c=ETA_C(sgf),", "eta_c=ETA_C(sgf) / 1.01,",
           "eta_c = 2/s_GF off by -1 %", EOS),
    Mutant("eos.eta_c_x1.01", "theory/eos_flow.py",
           "eta_c=ETA_C(sgf),", "eta_c=1.01 * ETA_C(sgf),",
           "eta_c = 2/s_GF off by +1 %", EOS),
    Mutant("eos.hessian_lost_factor_2", "theory/eos_model.py",
           "2 * r_sym * x_j * delta_jk", "r_sym * x_j * delta_jk",
           "the off-manifold Hessian term 2r diag(x) loses its factor 2", EOS),
    Mutant("eos.sharpness_c_half", "theory/eos_model.py",
           "8 * c_sym * x_i**2 * beta_i", "4 * c_sym * x_i**2 * beta_i",
           "on-manifold sharpness 8c x^2 beta written as 4c (the c = 1/2 form applied twice)", EOS),
    Mutant("eos.min_sharpness_face_max", "theory/eos_minimizers.py",
           "return _face(x, x.min())", "return _face(x, x.max())",
           "min-sharpness vertex at argmax x (min/max swapped)", EOS),
    Mutant("eos.stable_eta_x_max", "theory/eos_minimizers.py",
           "return float(STABLE_ETA(x.min(), y, c))", "return float(STABLE_ETA(x.max(), y, c))",
           "stable-minima threshold at x_max (min/max swapped)", EOS),
    Mutant("eos.deep_exponent", "theory/eos_minimizers.py",
           "x_i ** (-L_sym / (L_sym - 2))", "x_i ** (-L_sym / (L_sym - 1))",
           "deep minimal-sharpness exponent L/(L-1) for L/(L-2)", EOS),
    Mutant("eos.bayes_d_plus_2", "theory/eos_risk.py",
           "2 * y_sym**2 / (d_sym * (d_sym + 1))", "2 * y_sym**2 / (d_sym * (d_sym + 2))",
           "Dirichlet second moment with d + 2 for d + 1", EOS),
    Mutant("eos.alpha_rate_x1.01", "theory/eos_flow.py",
           "2 * (1 - x_next / x_max)", "2.02 * (1 - x_next / x_max)",
           "small-alpha rate exponent off by 1 %", EOS),
    Mutant("eos.gf_limit_rate", "theory/eos_flow.py",
           "beta0_i * sp.exp(-4 * x_i * tau_sym)", "beta0_i * sp.exp(-2 * x_i * tau_sym)",
           "gradient-flow closed form with rate 2x for 4x", EOS),
    # ---- numerics -------------------------------------------------------------------------------------
    Mutant("numerics.rk4_weight", "numerics/tableau.py",
           'b=_rational(["1/6", "1/3", "1/3", "1/6"]),', 'b=_rational(["1/6", "1/3", "1/6", "1/3"]),',
           "two RK4 weights swapped in the tableau every RK4 integrator reads (they still sum to 1)", SAM),
    Mutant("numerics.sam_ascent_sign", "numerics/sam_discrete.py",
           "Wp[l, j] = W[l, j] + eps[l, j]", "Wp[l, j] = W[l, j] - eps[l, j]",
           "SAM's ascent step taken downhill (flipped sign)", SAM, SAM_PIPELINE),
    Mutant("numerics.sam_joint_layer_swap", "numerics/sam_discrete.py",
           'NORMALIZATION_CODES = {"joint": 0, "layer": 1}', 'NORMALIZATION_CODES = {"joint": 1, "layer": 0}',
           "SAM joint and per-layer normalisation swapped", SAM, SAM_PIPELINE),
    Mutant("numerics.linf_sign_zero", "numerics/sam_discrete.py",
           "eps[l, j] = rho if v > 0.0 else (-rho if v < 0.0 else 0.0)", "eps[l, j] = rho if v >= 0.0 else -rho",
           "l_inf-SAM with sign(0) = +1", SAM, SAM_PIPELINE),
    Mutant("numerics.gd_lost_factor_2", "numerics/eos_gd.py",
           "a[b] = 4.0 * c * eta[b] * rb * act[b]", "a[b] = 2.0 * c * eta[b] * rb * act[b]",
           "GD sweep kernel: gradient of c r^2 loses its factor 2", EOS),
    Mutant("numerics.gd_path_lost_factor_2", "numerics/eos_gd.py",
           "a = 4.0 * c * eta * r\n", "a = 2.0 * c * eta * r\n",
           "GD path kernel: gradient of c r^2 loses its factor 2", EOS),
    Mutant("numerics.second_eigenvalue", "numerics/eos_gd.py",
           "return self.eigenvalues[:, -1]", "return self.eigenvalues[:, -2]",
           "lambda_max read as the 2nd eigenvalue", EOS),
    Mutant("numerics.bisection_bracket", "numerics/l2_boundaries.py",
           "lo, hi = mu[0] / norm, mu[-1] / norm", "lo, hi = mu[0] / norm, mu[-2] / norm",
           "alpha_collapse bracket with mu_{d-1} for mu_d", SAM),
    # ---- validation (torch) ---------------------------------------------------------------------------
    Mutant("validation.sam_ascent_sign", "validation/sam.py",
           "torch._foreach_add_(params, eps)", "torch._foreach_sub_(params, eps)",
           "torch SAM optimizer: ascent step taken downhill", (), SAM_PIPELINE),
    Mutant("validation.sam_joint_layer_swap", "validation/sam.py",
           'if normalization == "layer":', 'if normalization == "joint":',
           "torch SAM optimizer: joint and per-layer normalisation swapped", (), SAM_PIPELINE),
    Mutant("validation.second_eigenvalue", "validation/sharpness.py",
           "vals, vecs = eigsh(op, k=1, which=which", "vals, vecs = eigsh(op, k=2, which=which",
           "sharpness: eigsh asked for two eigenvalues and the 2nd is read", (), EOS_PIPELINE),
    # ---- ledger (front door) --------------------------------------------------------------------------
    Mutant("ledger.tolerance_x10", "ledger.py",
           "return not (obs.error <= tol)", "return not (obs.error <= 10 * tol)",
           "every tolerance loosened 10x (cases and controls)", ALL),
    Mutant("ledger.control_params_ignored", "ledger.py",
           "obs = claim.evaluate(moved_params, wrong)", "obs = claim.evaluate(params, wrong)",
           "a control that moves a parameter is evaluated at the unmoved one", ALL),
    Mutant("ledger.control_size_div_10", "ledger.py",
           "return params, _scaled(predicted, 1 + signed, key)", "return params, _scaled(predicted, 1 + signed / 10, key)",
           "shifted-prediction controls move 0.1 % instead of their stated size", ALL),
    Mutant("ledger.controls_first_case_only", "ledger.py",
           "cases = cases[: claim.controls] if claim.controls is not None else cases",
           "cases = cases[:1]",
           "controls judged on the first sampled case only", ALL),
)
