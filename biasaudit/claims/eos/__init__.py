r"""Paper 2, "Conflicting Biases at the Edge of Stability": the shared-weight diagonal model, its minimizers,
gradient flow and GD around eta_c = 2/s_GF, and learning-rate sweeps of networks, ids ``eos.*``. One folder
per id prefix (:data:`FOLDERS`, in reading order):

* ``hessian/``: the Hessian formula and its rank-one form on the solution manifold P;
* ``min_norm/``, ``min_sharpness/``, ``minimizers/``: the minimal-norm and minimal-sharpness points of P, and
  that they differ;
* ``pareto/``: the Pareto front of norm against sharpness;
* ``stable_minima/``: which minima GD with step eta can stay at;
* ``gf/``: gradient flow's limit beta_GF; ``s_gf/``: the sharpness s_GF it reaches (small and large init);
* ``gd/``: GD around eta_c (tracking 2/eta, the stability edge, the kink; ``edge.py``) and GD's outcomes and
  endpoints (``outcomes.py``);
* ``central_flow/``: the central flow (gradient flow held at S = 2/eta) as a predictor of GD's endpoint;
* ``risk/``: the risk of GD's endpoint; ``deep/``: shared weights at depth L;
* ``torch/``: learning-rate sweeps of trained networks (experiment claims).

Parameters are dicts with ``x`` (tuple, > 0), ``y`` (> 0), ``w0`` or ``alpha`` (w0 = alpha·1), and ``c``
(the loss factor, L = c r², default 1/2). Theory claims predict from :mod:`biasaudit.theory` and observe
with independent numerics (linprog/SLSQP, ``solve_ivp``, finite differences, Monte Carlo, the numba GD kernel
of :mod:`biasaudit.numerics.eos_gd`, mpmath). Conventions and measured numbers: ``notes/eos.md``;
``_common.py`` holds what the folders share.
"""

__all__ = ["FOLDERS"]

FOLDERS = ("hessian", "min_norm", "min_sharpness", "minimizers", "pareto", "stable_minima", "gf", "s_gf", "gd",
           "central_flow", "risk", "deep", "certified", "torch")
