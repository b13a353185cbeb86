"""``certified.*``: the cost of a proven enclosure per regime boundary (Arb ball arithmetic, interval Newton,
Krawczyk, the top eigenvalue), an absolute bound: at most 50 ms per boundary (median over repeats, after a warm-up
that prints the sympy expressions into balls once).

Each case times the whole certification of one set of boundaries at the CLI's example inputs and divides by the
number of boundaries it proves; the float computation of the same boundaries is timed beside it for scale.
"""

from __future__ import annotations

from biasaudit.benchmarks import BenchCase, BenchResult, Target, median_time

__all__ = ["CASES", "MS_PER_BOUNDARY"]

MS_PER_BOUNDARY = 50.0  # the target: a certificate must be cheap enough to print beside every value, every call


def _case(certify, compute, label: str):
    def run(quick: bool) -> BenchResult:
        import time

        values = compute()
        start = time.perf_counter()
        n = len(certify(values).certified)
        first = time.perf_counter() - start  # includes printing the sympy expressions into balls (cached after)
        repeats = 7 if quick else 31
        t_cert = median_time(lambda: certify(values), repeats=repeats, warmup=2)
        t_float = median_time(compute, repeats=repeats, warmup=1)
        per = 1e3 * t_cert / n
        return BenchResult({"certify": t_cert, "float": t_float},
                           [Target(f"{label}: ms per certified boundary (median)", per, MS_PER_BOUNDARY, "<=", "ms")],
                           [f"{n} boundaries certified in {1e3 * t_cert:.2f} ms ({per:.3f} ms each); the float "
                            f"computation of the same regimes takes {1e3 * t_float:.2f} ms; the first call in this "
                            f"process took {1e3 * first:.1f} ms (it prints the expressions into balls once)"])
    return run


def _l2():
    from biasaudit.theory.sam_l2 import l2_regime_statement

    return l2_regime_statement([1.0, 3.0, 4.0], 0.2)


def _l2_certify(reg):
    from biasaudit.numerics.certified_boundaries import certify_l2

    return certify_l2(reg)


def _linf():
    from biasaudit.theory.sam_linf import UNBALANCED_THRESHOLD, linf_sam_limit

    linf_sam_limit([1.0, 2.0, 3.0], 0.2, 0.1, 2)
    UNBALANCED_THRESHOLD(0.1)
    return ([1.0, 2.0, 3.0], 0.1, 2)


def _linf_certify(args):
    from biasaudit.numerics.certified_boundaries import certify_linf

    return certify_linf(*args)[1]


def _eos(w0=0.05):
    from biasaudit.theory.eos_flow import eos_regimes

    return eos_regimes([0.7, 1.3, 2.1], 1.5, [w0] * 3)


def _eos_certify(reg):
    from biasaudit.numerics.certified_boundaries import certify_eos

    return certify_eos(reg)


CASES = (
    BenchCase("certified.sam_l2", "l2-SAM boundaries at mu = (1, 3, 4), rho = 0.2: ms per certified boundary",
              _case(_l2_certify, _l2, "l2-SAM")),
    BenchCase("certified.sam_linf", "l_inf-SAM thresholds at rho = 0.1: ms per certified threshold",
              _case(_linf_certify, _linf, "l_inf-SAM")),
    BenchCase("certified.eos", "toy model of paper 2 at x = (0.7, 1.3, 2.1), y = 1.5, w0 = 0.05: ms per certified "
                               "quantity (tau, s_GF, eta_c, ...)", _case(_eos_certify, _eos, "EoS")),
    BenchCase("certified.eos_large_init", "the same model from w0 = 1 (large init: s_GF a top eigenvalue)",
              _case(_eos_certify, lambda: _eos(1.0), "EoS, large init")),
)
