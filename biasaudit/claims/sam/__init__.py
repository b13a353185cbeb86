r"""Paper 1, "Minor First, Major Last": GD, l_inf-SAM and l2-SAM on depth-L diagonal linear networks, ids
``sam.*``. One folder per id prefix (:data:`FOLDERS`, in reading order):

* ``depth1/``: depth 1, one point and several points (SAM goes where GD goes; simultaneous sliding);
* ``gd/``: the GD closed forms;
* ``linf/``: l_inf-SAM: closed form, zero hit, equilibrium, chatter and unbalanced init at L = 2
  (``closed_forms.py``), the limit rules at L = 2 and L >= 3 and the parity of L (``limits.py``);
* ``flow/``: the exact facts linking one discrete step to the rescaled flow, the joint normalisation as the
  library's convention, the numba integrator against its reference;
* ``discrete/``: the discrete algorithms (balance, zero coordinates, the flow limit; the kernel against its
  references);
* ``l2/``: l2-SAM: the log-linear reduction, alpha_c, the three regimes, their dynamics, depth L > 2;
* ``torch/``: the same questions on trained networks (experiment claims).

Theory claims predict from :mod:`biasaudit.theory` (its formulas, lambdified once) and observe with independent
numerics: the numba integrators of :mod:`biasaudit.numerics.flows`, the discrete algorithms of
:mod:`biasaudit.numerics.sam_discrete`, scipy's ``solve_ivp``/``minimize``, complex-step derivatives, mpmath. A
claim's statement is built from the same theory formulas its prediction evaluates (``Claim.formulas``), in the
symbols of the theory modules (``SYMBOLS``); a prediction with no closed form says why (``Claim.no_closed_form``).
Conventions (sign(0) = 0, Filippov sliding, c_L, rescaled time for several points) are in
``notes/sam-gd-linf.md`` and ``notes/sam-l2.md``; ``_common.py`` holds the helpers the folders share.
"""

__all__ = ["FOLDERS"]

FOLDERS = ("depth1", "gd", "linf", "flow", "discrete", "l2", "certified", "torch")
