r"""Paper 1, §C "l2-SAM at L = 2" and "l2-SAM at L > 2": the ``sam.l2.*`` claims.

Predictions come from :mod:`biasaudit.theory.sam_l2` (sympy, lambdified once; α_c by certificate-driven bisection of
the exact reduction in :mod:`biasaudit.numerics.l2_reduction`). Observations come from *independent* numerics:

* the full d-dimensional flow in log space with scipy's DOP853 (no use of the reduction),
* the mpmath Gragg–Bulirsch–Stoer reference at 40 digits (:mod:`biasaudit.numerics.sam_mpmath`),
* finite-difference Jacobians, the discrete SAM map (:mod:`biasaudit.numerics.heatmap`), and scipy on the depth-L
  field for L > 2.

Conventions and every measured number: ``notes/sam-l2.md``. Symbols: μ (``mu``), α (``alpha``), ρ (``rho``),
c = ρ/√2 (joint) or ρ (per layer), τ rescaled time, A = ∫dτ/S, S = ‖μ⊙w‖₂, j† = argmax_j β_j (1-based).

Modules, by concept (the order of :data:`CLAIMS` is theirs, concatenated):

* :mod:`~biasaudit.claims.sam.l2.reduction`: the exact log-linear reduction, the j† formula, the fixed points;
* :mod:`~biasaudit.claims.sam.l2.separatrix`: α_c, the separatrix between collapse and escape (certificates,
  sandwich, the bisection against mpmath and the reference table derived here, scale invariance);
* :mod:`~biasaudit.claims.sam.l2.regimes`: the regimes and their boundaries (regime 1 collapse, α_grow, regime 3,
  regime 2);
* :mod:`~biasaudit.claims.sam.l2.dynamics`: the dynamics between the boundaries (plateau law, switch times,
  monotonicity in α and τ, asymptotics);
* :mod:`~biasaudit.claims.sam.l2.training_speed`: how fast SAM trains against GD (the loss plateau);
* :mod:`~biasaudit.claims.sam.l2.discrete`: the discrete algorithm against the flow;
* :mod:`~biasaudit.claims.sam.l2.deep`: l2-SAM at L > 2;
* :mod:`~biasaudit.claims.sam.l2.crosscheck`: implementation cross-checks (the heatmap and certificate kernels
  against their references, the heatmap's methods against each other, the reduction, α_c and the switch times
  against mpmath);
* :mod:`~biasaudit.claims.sam.l2._common`: what they share (the memoised independent full flow, the reduction,
  the cached boundaries, τ grids, symbols).
"""

from __future__ import annotations

from biasaudit.claims.sam.l2 import (crosscheck, deep, discrete, dynamics, reduction, regimes, separatrix,
                                    training_speed)

__all__ = ["CLAIMS"]

CLAIMS = (reduction.CLAIMS + separatrix.CLAIMS + regimes.CLAIMS + dynamics.CLAIMS + training_speed.CLAIMS
          + discrete.CLAIMS
          + deep.CLAIMS
          + crosscheck.CLAIMS)
