r"""Paper 1 foundations: depth 1, GD closed forms, l_inf-SAM (claims A, "GD closed forms", B), and the exact
facts linking the discrete algorithms to the reduced rescaled flows.

Every claim predicts from :mod:`theory` (sympy, lambdified once) and observes with independent numerics:
the numba integrators of :mod:`biasaudit.numerics.flows`, the discrete algorithms of :mod:`biasaudit.numerics.sam_discrete`,
scipy's ``solve_ivp``/``minimize`` or complex-step derivatives.  Conventions (sign(0) = 0, Filippov sliding,
c_L, rescaled time for several points) are in ``notes/sam-gd-linf.md``.

Symbols: ``mu`` data (0 < mu_1 < ... < mu_d), ``alpha`` balanced init, ``rho`` radius, ``eta`` step, ``L``
depth, ``tau`` rescaled time, ``h_k = eta sigma(-z~_k)`` the Euler step of one discrete step.

Modules, by concept (the order of :data:`CLAIMS` is theirs, concatenated):

* :mod:`~biasaudit.claims.sam.depth1`: depth 1, one point and several points (``sam.depth1.*``, claim A);
* :mod:`~biasaudit.claims.sam.gd`: the GD closed forms (``sam.gd.*``);
* :mod:`~biasaudit.claims.sam.linf`: l_inf-SAM at L = 2 (``sam.linf.*``, claim B: closed form, zero hit,
  equilibrium, chatter, unbalanced init);
* :mod:`~biasaudit.claims.sam.linf_limits`: l_inf-SAM's limit rules at L = 2 and L >= 3, and the parity of L;
* :mod:`~biasaudit.claims.sam.exact_facts`: the exact facts linking the discrete algorithms to the reduced
  rescaled flows (``sam.flow.*``, ``sam.discrete.*``);
* :mod:`~biasaudit.claims.sam._common`: the helpers and symbols they share.

The ``sam.l2.*`` claims are :mod:`biasaudit.claims.sam_l2`.
"""

from __future__ import annotations

from biasaudit.claims.sam import depth1, exact_facts, gd, linf, linf_limits

__all__ = ["CLAIMS"]

CLAIMS = depth1.CLAIMS + gd.CLAIMS + linf.CLAIMS + linf_limits.CLAIMS + exact_facts.CLAIMS
