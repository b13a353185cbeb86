"""``biasaudit regimes eos``: the regimes of the shared-weight toy model of paper 2, with their formulas."""

from __future__ import annotations

import json

__all__ = ["register", "run"]


def register(targets) -> None:
    """Add ``eos`` and its options to the ``targets`` of ``biasaudit regimes``."""
    p = targets.add_parser("eos", help="paper 2: s_GF, eta_c, stable minima, minimizers, Pareto front of the toy model")
    p.add_argument("--x", required=True, help="data point, comma-separated, all > 0 (e.g. 0.7,1.3,2.1); every "
                                              "number here has magnitude in [1e-30, 1e30]")
    p.add_argument("--y", required=True, type=str, help="label, > 0")
    p.add_argument("--w0", required=True, help="initial weights, comma-separated, non-zero; one number is used for every "
                                               "coordinate (e.g. 0.05)")
    p.add_argument("--loss-factor", default="0.5", help="c in L = c r^2, > 0 (default 0.5)")
    p.add_argument("--eta", default=None, help="step sizes, comma-separated, > 0: adds the central flow's prediction "
                                               "of GD's endpoint at each (beta, norms, sharpness, risk, met_edge)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args) -> int:
    """Print the regimes of the toy model at ``--x``, ``--y``, ``--w0`` (and ``--loss-factor``), as text or JSON."""
    from biasaudit.plumbing import broadcast_vector, finite_scalar, parse_float_list
    from biasaudit.theory.eos_flow import eos_regimes

    from biasaudit.plumbing.ranges import ZERO_CHECKED_LATER, in_range, vector_in_range

    # 0 passes the range checks only to reach eos_regimes' own rule for it (x > 0, y > 0, w0 non-zero, c > 0),
    # which names the reason; the range message must not say that 0 is accepted.
    later = ZERO_CHECKED_LATER
    x = vector_in_range("x", parse_float_list("x", args.x), zero=later)
    w0 = vector_in_range("w0", broadcast_vector("w0", parse_float_list("w0", args.w0), len(x), "--x"), zero=later)
    y = in_range("y", finite_scalar("y", args.y), zero=later)
    c = in_range("loss_factor", finite_scalar("loss_factor", args.loss_factor), zero=later)
    from biasaudit.commands.regimes import certificate_lines
    from biasaudit.numerics.certified_boundaries import certify_eos

    import dataclasses

    reg = eos_regimes(x, y, w0, loss_factor=c)
    cert_json = certify_eos(reg).to_json()
    reg = dataclasses.replace(reg, **cert_json)
    flows = None
    if args.eta is not None:
        from biasaudit.numerics.eos_central_flow import central_flow_curve, validate_etas

        etas = vector_in_range("eta", validate_etas(parse_float_list("eta", args.eta)))
        flows = central_flow_curve(x, y, w0, etas, loss_factor=c)
    if args.json:
        out = reg.to_json()
        if flows is not None:
            out["central_flow"] = [f.to_json() for f in flows]
        print(json.dumps(out, indent=1))
        return 0
    print(format_regimes(reg, cert_json))
    if flows is not None:
        print()
        print(format_central_flow(flows, reg.eta_c))
    print()
    print("\n".join(certificate_lines(cert_json)))
    return 0


def format_central_flow(flows, eta_c: float) -> str:
    """One line per eta: where the central flow ends (the predicted endpoint of GD at that step)."""
    lines = ["Central flow (gradient flow held at S = 2/eta once S reaches it): predicted endpoint of GD",
             f"  {'eta':>10} {'eta/eta_c':>9}  {'met edge':>8}  {'status':>14}  {'||beta||_1':>10}  {'||beta||_2':>10}  "
             f"{'S':>10}  {'risk':>10}  beta"]
    for f in flows:
        if f.status == "unstable_start":
            lines.append(f"  {f.eta:10.6g} {f.eta / eta_c:9.4g}  {'-':>8}  {f.status:>14}  lambda_max(H(w0)) >= 2/eta: "
                         "no flow")
            continue
        lines.append(f"  {f.eta:10.6g} {f.eta / eta_c:9.4g}  {'yes' if f.met_edge else 'no':>8}  {f.status:>14}  "
                     f"{f.norm_l1:10.6g}  {f.norm_l2:10.6g}  {f.sharpness:10.6g}  {f.risk:10.4g}  {_vec(f.beta)}")
    return "\n".join(lines)


def _vec(v) -> str:
    return "(" + ", ".join(f"{a:.6g}" for a in v) + ")"


def format_regimes(reg, cert_json: dict | None = None) -> str:
    """The regimes as the text ``biasaudit regimes eos`` prints (with a ``[certified lo, hi]`` mark after each value
    ``cert_json``, a ``Certificates.to_json()``, encloses)."""
    from biasaudit.commands.regimes import certified_mark

    def mark(name: str) -> str:
        return certified_mark(cert_json, name) if cert_json else ""

    c = reg.loss_factor
    lines = [
        f"Shared-weight diagonal model f = <w*w, x>, L = {c:g} r^2, r = <x, w*w> - y",
        f"  x = {_vec(reg.x)}, y = {reg.y:g}, w0 = {_vec(reg.w0)}",
        f"  r0 = {reg.r0:.6g}  ->  {reg.init_regime} init"
        + ("  (r0 <= 0: sharpness rises along the flow)" if reg.init_regime == "small"
           else "  (r0 > 0: sharpness is largest at w0; GD catapults, 2/s_GF does NOT predict the transition)"),
        "",
        "Gradient flow   beta_GF = beta0 * exp(-4 x tau),  sum_i x_i beta0_i exp(-4 x_i tau) = y",
        f"  tau = {reg.tau:.10g}{mark('tau')}",
        f"  beta_GF = {_vec(reg.beta_gf)},  ||beta_GF||_1 = {reg.beta_gf_l1:.10g}",
        f"  S(beta_GF) = 8c sum x_i^2 beta_i = {reg.sharpness_gf:.10g}{mark('sharpness_gf')}",
        f"  s_GF = max_t lambda_max(H(w(t))) = {reg.s_gf:.10g}{mark('s_gf')}      (lambda_max(H(w0)) = "
        f"{reg.lambda_max_init:.6g})",
        f"  eta_c = 2 / s_GF = {reg.eta_c:.10g}{mark('eta_c')}",
        "",
        "Linearly stable minima {beta in P : 8c sum x_i^2 beta_i <= 2/eta}",
        f"  exist iff eta <= 1/(4c y x_min) = {reg.eta_stable_max:.10g}{mark('eta_stable_max')}",
        f"  contain the min-norm vertex iff eta <= 1/(4c y x_max) = {reg.eta_min_norm_stable_max:.10g}"
        f"{mark('eta_min_norm_stable_max')}",
        "",
        "Minimizers on the solution simplex P = {beta >= 0 : <x, beta> = y}  (vertices 1-based)",
        f"  min ||beta||_1 = ||w||_2^2 (and min ||w||_1): vertex {reg.min_norm_vertex}"
        + (f" (face {list(reg.min_norm_face)})" if len(reg.min_norm_face) > 1 else "")
        + f", ||beta||_1 = y/x_max = {reg.min_norm_beta_l1:.10g}",
        f"  min sharpness: vertex {reg.min_sharpness_vertex}"
        + (f" (face {list(reg.min_sharpness_face)})" if len(reg.min_sharpness_face) > 1 else "")
        + f", S_min = 8c y x_min = {reg.min_sharpness:.10g}",
        f"  min ||beta||_2: y x/||x||^2 = {_vec(reg.min_l2_beta)}",
        "  the two solution sets are "
        + ("disjoint (x_max > x_min)" if reg.minimizers_disjoint
           else "NOT disjoint (x_max = x_min: every point of P minimizes both)"),
        "",
        "Pareto front N*(s) = min{||beta||_1 : S <= s}, piecewise linear through (s, N*):",
        "  " + "  ".join(f"({s:.6g}, {n:.6g})" for s, n in reg.pareto_front),
    ]
    if reg.small_alpha_exponent is not None:
        lines += ["", f"Small-alpha rate (w0 = alpha*1): 8c y x_max - S_GF = O(alpha^{reg.small_alpha_exponent:.6g}),"
                      "  exponent 2(1 - x_(d-1)/x_max)"]
    return "\n".join(lines)
