"""``sam.torch.*``: paper 1 on trained networks (experiment claims): "minor first, major last" in time on a
ladder of models under the experiment contract (``ladder.py``), SAM's collapse boundary (``regimes.py``) and how
it moves with rho (``rho_scaling.py``), the torch diagonal network against the numba kernels (``diag_net.py``,
a cross-check) and the calibration of their decisions on placebo data (``calibration.py``)."""

from biasaudit.claims.sam.torch import calibration, diag_net, ladder, regimes, rho_scaling

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = ladder.CLAIMS + regimes.CLAIMS + rho_scaling.CLAIMS + diag_net.CLAIMS + calibration.CLAIMS
FIGURES = ladder.FIGURES + regimes.FIGURES
