"""``biasaudit regimes sam``: predicted l2-SAM regime boundaries or the l_inf-SAM limit, with formulas.

Examples::

    biasaudit regimes sam --norm l2 --depth 2 --mu 1,2 --rho 1
    biasaudit regimes sam --norm l2 --mu 1,3,4 --rho 0.2 --alpha 0.1 --json
    biasaudit regimes sam --norm linf --depth 2 --mu 1,2,3 --rho 0.1 --alpha 0.2,0.14,0.13 --json

No numba/torch import at module import time (only inside :func:`run`).
"""

from __future__ import annotations

import json

__all__ = ["register", "run"]


def register(sub) -> None:
    """Add ``sam`` and its options to the targets ``sub`` of ``biasaudit regimes``."""
    p = sub.add_parser("sam", help="paper 1 (SAM on diagonal networks): l2 regime boundaries or the l_inf limit")
    p.add_argument("--norm", choices=("l2", "linf"), default="l2", help="SAM ascent norm (default l2)")
    p.add_argument("--depth", type=int, default=2, help="network depth L in [1, 32] (default 2)")
    p.add_argument("--mu", required=True, help="data point, strictly positive and increasing, e.g. 1,3,4; every "
                                               "number's magnitude in [1e-30, 1e30], max/min <= 1e4")
    p.add_argument("--rho", type=float, required=True, help="SAM radius rho in [1e-30, 1e30]")
    p.add_argument("--alpha", help="balanced init: one value (uniform) or one per coordinate; needed for linf")
    p.add_argument("--normalization", choices=("joint", "layer"), default="joint",
                   help="l2 ascent normalised over all L*d parameters (joint, c = rho/sqrt(L)) or per layer "
                        "(c = rho)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def _inputs(args):
    import numpy as np

    from biasaudit.plumbing import InputError, parse_float_list, positive_increasing, positive_int, positive_scalar

    from biasaudit.plumbing.ranges import depth_in_range, in_range, spread_in_range, vector_in_range

    mu = spread_in_range("mu", vector_in_range("mu", positive_increasing("mu", parse_float_list("mu", args.mu))))
    rho = in_range("rho", positive_scalar("rho", args.rho))
    depth = depth_in_range("depth", positive_int("depth", args.depth, minimum=1))
    alpha = None
    if args.alpha is not None:
        alpha = parse_float_list("alpha", args.alpha)
        if np.any(alpha <= 0):
            raise InputError("alpha", "must be strictly positive", alpha)
        vector_in_range("alpha", alpha)
        if alpha.size not in (1, mu.size):
            raise InputError("alpha", f"must have length 1 (uniform) or {mu.size} (the length of mu)", alpha)
    return mu, rho, depth, alpha


def run(args) -> int:
    """Print l2-SAM's regime boundaries or, with ``--norm linf``, where l_inf-SAM's β goes from ``--alpha``, as text or
    JSON."""
    mu, rho, depth, alpha = _inputs(args)
    if args.norm == "linf":
        return _run_linf(args, mu, rho, depth, alpha)
    return _run_l2(args, mu, rho, depth, alpha)


def _run_linf(args, mu, rho, depth, alpha) -> int:
    import numpy as np

    from biasaudit.plumbing import InputError

    if alpha is None:
        raise InputError("alpha", "is required for --norm linf (the limit depends on the init alpha)")
    if args.normalization != "joint":
        raise InputError("normalization", "applies to --norm l2 only (l_inf-SAM uses sign(grad))",
                         args.normalization)
    try:
        from biasaudit.theory.sam_linf import linf_sam_limit
    except ModuleNotFoundError as exc:  # sam-core's module; report clearly rather than crash
        raise InputError("norm", "linf needs theory.sam_linf (not installed in this checkout)", "linf") from exc
    from biasaudit.commands.regimes import certificate_lines, certified_mark
    from biasaudit.numerics.certified_boundaries import certify_linf

    alpha_vec = np.full(mu.size, alpha[0]) if alpha.size == 1 else alpha
    limit = linf_sam_limit(mu, alpha_vec, rho, depth)
    index = None if limit.index is None else int(limit.index)
    thresholds, cert = certify_linf(mu, rho, depth)
    if args.json:
        beta = getattr(limit, "beta_limit", None)
        out = {"limit": limit.kind, "index": index, "mu": mu.tolist(), "alpha": alpha_vec.tolist(), "rho": rho,
               "depth": depth,
               "beta_limit": None if beta is None else np.asarray(beta, float).tolist(),
               "formula": str(getattr(limit, "formula", "")), "explanation": getattr(limit, "explanation", ""),
               "thresholds": thresholds, **cert.to_json()}
        print(json.dumps(out, indent=1))
        return 0
    import sympy as sp

    print(f"l_inf-SAM, depth L = {depth}, mu = {mu.tolist()}, rho = {rho:g}, alpha = {alpha_vec.tolist()}")
    print(f"limit: {limit.kind}" + ("" if index is None else f", index k = {index} (1-based)"))
    cert_json = cert.to_json()
    for name, value in thresholds.items():
        print(f"  {name:20s} = {value:.12g}{certified_mark(cert_json, name)}")
    formula = getattr(limit, "formula", None)
    if formula is not None:
        print(sp.pretty(formula, use_unicode=True))
    if getattr(limit, "explanation", ""):
        print(limit.explanation)
    print()
    print("\n".join(certificate_lines(cert_json)))
    return 0


def _run_l2(args, mu, rho, depth, alpha) -> int:
    import sympy as sp

    from biasaudit.api import classify_alpha, null_reasons
    from biasaudit.commands.regimes import certificate_lines, certified_mark
    from biasaudit.numerics.certified_boundaries import certify_l2
    from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries

    regimes = l2_sam_regime_boundaries(mu, rho, depth=depth, normalization=args.normalization)
    cert_json = certify_l2(regimes).to_json()
    out = {**regimes.to_json(), **cert_json}
    out["null_reasons"] = {key: reason for key, reason in null_reasons(depth).items() if out.get(key) is None}
    if alpha is not None:
        out["alpha"] = alpha.tolist()
        out["alpha_regime"] = classify_alpha(regimes, mu, alpha)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"l2-SAM, depth L = {depth}, {args.normalization} normalisation, mu = {mu.tolist()}, rho = {rho:g}")
    rows = [("c", regimes.c), ("alpha_collapse", regimes.alpha_collapse), ("alpha_grow", regimes.alpha_grow),
            ("alpha_gd_like", regimes.alpha_gd_like)]
    for name, value in rows:
        shown = "none" if value is None else f"{value:.12g}"
        extra = "" if value is None or name == "c" else f"   (= {value / regimes.c:.10g} c = {value / rho:.6g} rho)"
        print(f"  {name:15s} = {shown}{extra}{certified_mark(cert_json, name) if value is not None else ''}")
    if alpha is not None:
        print(f"  alpha {alpha.tolist()}: {out['alpha_regime']}")
    print(f"  note: {regimes.notes}")
    print()
    print("\n".join(certificate_lines(cert_json)))
    for name, expr in {**regimes.formulas, **{f"certificate ({k})": v for k, v in regimes.certificates.items()}
                       }.items():
        print(f"\n{name}:")
        print(sp.pretty(expr, use_unicode=True))
    return 0
