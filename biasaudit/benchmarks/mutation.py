"""The mutation suite as a benchmark case: it takes minutes, so ``biasaudit bench`` runs it.

``mutation.score``
    Every mutant of :mod:`biasaudit.devtools.mutants` applied to a copy of the package, its claims run without
    the reference values; target: every mutant killed (a confirmed claim turns). ``--quick`` runs one mutant
    per layer. Timings: the whole suite's wall time and the median per mutant.
"""

from __future__ import annotations

import statistics

from biasaudit.benchmarks import BenchCase, BenchResult, Target

__all__ = ["CASES"]

QUICK = ("eos.eta_c_div_1.01", "numerics.gd_path_lost_factor_2", "validation.second_eigenvalue",
         "ledger.control_size_div_10")


def _run(quick: bool) -> BenchResult:
    from biasaudit.devtools.mutants import MUTANTS
    from biasaudit.devtools.mutate import run_suite

    mutants = tuple(m for m in MUTANTS if m.name in QUICK) if quick else MUTANTS
    result = run_suite(mutants, jobs=2)
    killed, total = result.score
    out = BenchResult()
    out.timings["suite (wall)"] = result.elapsed_s
    out.timings["per mutant (median, 2 at a time)"] = statistics.median(m.elapsed_s for m in result.mutants)
    out.targets.append(Target("mutants killed (fraction)", killed / total, 1.0, ">=", "fraction"))
    for m in result.mutants:
        if not m.killed:
            out.notes.append(f"SURVIVED {m.name}: {m.bug}")
    out.notes.append(f"mutation score {killed}/{total}; by layer: " + ", ".join(
        f"{layer} {sum(m.killed for m in result.mutants if m.layer == layer)}/"
        f"{sum(m.layer == layer for m in result.mutants)}" for layer in sorted({m.layer for m in result.mutants})))
    return out


CASES = (BenchCase("mutation.score", "the mutation suite: every plausible bug turns some confirmed claim", _run),)
