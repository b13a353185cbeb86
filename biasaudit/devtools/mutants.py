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
    tests: tuple[str, ...] = ()  # test files (in tests/) that see it; () = every test file naming the module

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
    # ---- fresh mutants, in classes the first 36 lack ---------------------------------------------------
    # off-by-one in loop bounds and indices
    Mutant("sam.linf_limit_index_0based", "theory/sam_linf.py",
           "k = int(np.flatnonzero(grow)[-1]) + 1", "k = int(np.flatnonzero(grow)[-1])",
           "l_inf limit rule at L = 2: the winning index e_max G returned 0-based", SAM),
    Mutant("eos.alpha_rate_index", "theory/eos_flow.py",
           "return float(ALPHA_RATE(xu[-2], xu[-1]))", "return float(ALPHA_RATE(xu[-1], xu[-1]))",
           "small-alpha rate read at x_max twice (index -2 off by one)", EOS),
    Mutant("numerics.grad_suffix_off_by_one", "numerics/sam_discrete.py",
           "for l in range(L - 1, -1, -1):", "for l in range(L - 1, 0, -1):",
           "discrete SAM gradient: the suffix-product loop stops before layer 0", SAM),
    Mutant("numerics.sam_skips_first_step", "numerics/sam_discrete.py",
           "    row = 1\n    for k in range(1, steps + 1):\n        _perturb",
           "    row = 1\n    for k in range(2, steps + 1):\n        _perturb",
           "discrete SAM kernel: the step loop starts at 2 (one step fewer than asked)", SAM),
    Mutant("numerics.j_dagger_zero_based_reduction", "numerics/l2_reduction.py",
           "out = np.argmax(self.log_w, axis=1) + 1", "out = np.argmax(self.log_w, axis=1)",
           "the reduction's j-dagger returned 0-based", SAM),
    Mutant("ledger.drops_a_sample", "ledger.py",
           'cases += [("sample", claim.domain.sample(rng)) for _ in range(n_samples)]',
           'cases += [("sample", claim.domain.sample(rng)) for _ in range(n_samples - 1)]',
           "run_claim draws one sampled case fewer than the profile asks (a dropped seed)", ALL),
    # a sign in a symbolic derivative
    Mutant("sam.linf_departure_rate_sign", "theory/sam_linf.py",
           "sp.diff(LINF_FIELD_L2, w)", "-sp.diff(LINF_FIELD_L2, w)",
           "the departure rate from the l_inf equilibrium: derivative of the field with its sign flipped", SAM),
    Mutant("sam.depth1_field_sign", "theory/sam_gd.py",
           "sp.diff(GD_DEPTH1.expr, tau)", "-sp.diff(GD_DEPTH1.expr, tau)",
           "depth-1 field d/dtau of the closed form with its sign flipped", SAM),
    Mutant("sam.plateau_slope_sign", "theory/sam_l2.py",
           "sp.simplify(-delta * sp.diff(PLATEAU_EXIT_TIME, delta))",
           "sp.simplify(delta * sp.diff(PLATEAU_EXIT_TIME, delta))",
           "plateau exit slope -delta dT/ddelta with its sign flipped", SAM),
    Mutant("eos.hessian_residual_sign", "theory/eos_model.py",
           "4 * g_j * g_k + 2 * r_sym", "4 * g_j * g_k - 2 * r_sym",
           "the second derivative of c r^2: the residual term 2r diag(x) with its sign flipped", EOS),
    Mutant("numerics.filippov_weight_sign", "numerics/filippov.py",
           "dw[:, k] = np.where(patterns[:, k] > 0, 1.0, -1.0) * others",
           "dw[:, k] = np.where(patterns[:, k] > 0, -1.0, 1.0) * others",
           "Filippov sliding field: the derivative of the multilinear weights with its sign flipped", SAM),
    # a swapped argument order
    Mutant("eos.gf_limit_args_swapped", "theory/eos_flow.py",
           "return GF_LIMIT(p.x, p.beta0, gf_tau(p.x, p.y, p.beta0))",
           "return GF_LIMIT(p.beta0, p.x, gf_tau(p.x, p.y, p.beta0))",
           "gradient-flow limit called with x and beta0 swapped", EOS),
    Mutant("eos.s_gf_large_init_args_swapped", "theory/eos_flow.py",
           "return float(hessian_eigenvalues(p.x, p.y, p.w0, p.c)[-1])",
           "return float(hessian_eigenvalues(p.w0, p.y, p.x, p.c)[-1])",
           "s_GF at large init: the Hessian called with x and w0 swapped", EOS),
    Mutant("sam.linf_l2_args_swapped", "theory/sam_linf.py",
           "LINF_L2(m[None, :], a[None, :], r, t[:, None])", "LINF_L2(a[None, :], m[None, :], r, t[:, None])",
           "l_inf-SAM L = 2 closed form called with mu and alpha swapped", SAM),
    # a wrong default (loss factor, normalisation)
    Mutant("eos.problem_loss_factor_default", "theory/eos_model.py",
           "def eos_problem(x, y, w0=None, *, loss_factor: float = 0.5)",
           "def eos_problem(x, y, w0=None, *, loss_factor: float = 1.0)",
           "the EoS problem's loss factor c defaults to 1 instead of 1/2", EOS),
    Mutant("eos.stable_eta_default_c", "theory/eos_minimizers.py",
           "def stable_eta_max(x, y, c=0.5) -> float:", "def stable_eta_max(x, y, c=1.0) -> float:",
           "the stable-minima threshold's loss factor defaults to 1 instead of 1/2", EOS),
    Mutant("sam.reduced_field_default_layer", "theory/sam_fields.py",
           'def reduced_field(algorithm: str, depth: int, normalization: str = "joint")',
           'def reduced_field(algorithm: str, depth: int, normalization: str = "layer")',
           "the reduced field's normalisation defaults to per-layer instead of joint", SAM),
    Mutant("numerics.gd_sweep_loss_factor_default", "numerics/eos_gd.py",
           "def gd_sweep(x, y, w0, eta, *, loss_factor=0.5,", "def gd_sweep(x, y, w0, eta, *, loss_factor=0.25,",
           "the GD sweep's loss factor defaults to 1/4 instead of 1/2", EOS),
    # a cache key that ignores a parameter
    Mutant("sam.alpha_c_cache_ignores_normalization", "claims/sam/l2/_common.py",
           'return _alpha_c_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), p.get("normalization", "joint"))',
           'return _alpha_c_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), "joint")',
           "the cached alpha_c is keyed without the normalisation (every case reads the joint one)", SAM,
           tests=("test_sam_l2_claims.py",)),
    Mutant("sam.regimes_cache_ignores_normalization", "claims/sam/l2/_common.py",
           'return _regimes_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), p.get("normalization", "joint"))',
           'return _regimes_cached(tuple(float(m) for m in p["mu"]), float(p["rho"]), "joint")',
           "the cached regime boundaries are keyed without the normalisation (every case reads the joint ones)", SAM,
           tests=("test_sam_l2_claims.py",)),
    # an early return
    Mutant("sam.bisection_stops_early", "numerics/l2_boundaries.py",
           "    while hi - lo > rel_tol * hi:\n        mid = 0.5 * (lo + hi)\n        if mid <= lo or mid >= hi:",
           "    while hi - lo > 1e-6 * hi:\n        mid = 0.5 * (lo + hi)\n        if mid <= lo or mid >= hi:",
           "alpha_collapse bisection returns at 6 digits, whatever rel_tol asks", SAM),
    Mutant("eos.gf_tau_stops_early", "theory/eos_flow.py",
           "rtol=4 * np.finfo(float).eps, maxiter=500", "rtol=1e-6, maxiter=500",
           "the gradient-flow time tau_GF: root finder returns at 6 digits", EOS),
    Mutant("sam.linf_zero_hit_even_depth", "theory/sam_linf.py",
           "if depth % 2 == 0:  # L = 2 and even", "if depth == 2:  # L = 2 and even",
           "l_inf zero-hit time: returns inf early for even L >= 4", SAM),
    # a statistic that reads the wrong curve; a positive control that reads another statistic
    Mutant("eos.tracking_gap_wrong_curve", "numerics/eos_sweep.py",
           "return 1.0 - s.eta[m] * s.lambda_max[m] / 2.0", "return 1.0 - s.eta[m] * s.eigenvalues[m, 0] / 2.0",
           "the tracking gap reads the smallest Hessian eigenvalue's curve instead of lambda_max", EOS),
    Mutant("eos.kink_reads_unconverged_runs", "numerics/eos_sweep.py",
           "out[label] = kink_location(eta[view][ok], s.lambda_max[view][ok])",
           "out[label] = kink_location(eta[view], s.lambda_max[view])",
           "the kink estimate fits the sharpness of every run, the unconverged ones too (the wrong curve)", EOS),
    # ---- fresh mutants in code the implementation cross-checks reach ----------------------------------
    Mutant("numerics.reduction_record_time_index", "numerics/heatmap_reduction.py",
           "lw = log_alphas[b, j] + mu[j] * times[k] - c * mu[j] * mu[j] * a\n                if lw > wmax:",
           "lw = log_alphas[b, j] + mu[j] * times[k - 1] - c * mu[j] * mu[j] * a\n                if lw > wmax:",
           "reduction heatmap: j† read at the previous output time (an index off by one)", SAM),
    Mutant("numerics.heatmap_sequence_keeps_tau0_tie", "numerics/heatmap.py",
           "row = row[1:] if self.times[0] == 0 else row", "row = row",
           "heatmap j† sequences keep the tie at tau = 0 (the uniform-alpha argmax at 0 is index 1)", SAM),
    Mutant("numerics.filippov_together_ignored", "numerics/filippov.py",
           "_TOGETHER_TOL = 1e-8", "_TOGETHER_TOL = 0.0",
           "Filippov flow: a coordinate reaching its surface with another one is not entered with it", SAM),
    Mutant("numerics.mpmath_gd_step_scaled", "numerics/eos_mpmath.py",
           "            if k == max_steps:\n                break\n            a = a0 * r",
           "            if k == max_steps:\n                break\n            a = a0 * r * 0.999",
           "mpmath GD reference: the step scaled by 0.999 (a constant slipped into the update)", EOS),
    Mutant("ledger.positive_control_reads_statistic", "ledger.py",
           'control = observed.get("positive_control")', 'control = observed.get("statistic")',
           "a stored experiment record's positive control is read from the claim's own statistic", ALL),
)
