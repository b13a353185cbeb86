r"""Paper 2 claims ("Conflicting Biases at the Edge of Stability"), ids ``eos.*``.

Each claim's ``predict`` uses the closed forms of :mod:`biasaudit.theory.eos` (sympy, lambdified once); ``evaluate``
runs independent numerics: ``scipy.optimize.linprog`` / SLSQP for minimizers, ``solve_ivp`` for the flow,
finite-difference Hessians, Monte Carlo / quadrature for risks, and the numba GD kernel
(:mod:`biasaudit.numerics.eos_gd`) or mpmath for the GD claims. Conventions and measured numbers: ``notes/eos.md``.

Parameters are dicts with ``x`` (tuple, > 0), ``y`` (> 0), ``w0`` or ``alpha`` (w0 = alpha·1), and ``c``
(the loss factor, L = c r², default 1/2).

Modules, by concept (the order of :data:`CLAIMS` is theirs, concatenated):

* :mod:`~biasaudit.claims.eos.minimizers`: the Hessian and the minimizers on P (min norm, min sharpness, Pareto
  front, linearly stable minima);
* :mod:`~biasaudit.claims.eos.flow`: the gradient flow's limit β_GF and its sharpness s_GF;
* :mod:`~biasaudit.claims.eos.gd_edge`: GD around η_c = 2/s_GF (tracking 2/η, the stability edge, the kink);
* :mod:`~biasaudit.claims.eos.gd_outcomes`: GD's outcomes and endpoints (projected norm, outcome classes, float64
  vs mpmath, endpoints against the Pareto front, the spec's toy numbers);
* :mod:`~biasaudit.claims.eos.risk`: the risk claims and deep shared weights;
* :mod:`~biasaudit.claims.eos._common`: the helpers and domains they share.
"""

from __future__ import annotations

from biasaudit.claims.eos import flow, gd_edge, gd_outcomes, minimizers, risk

__all__ = ["CLAIMS"]

CLAIMS = minimizers.CLAIMS + flow.CLAIMS + gd_edge.CLAIMS + gd_outcomes.CLAIMS + risk.CLAIMS
