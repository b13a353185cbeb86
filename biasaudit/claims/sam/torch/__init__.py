"""``sam.torch.*``: paper 1 on trained networks (experiment claims): the torch diagonal network against the
numba kernels and the minor-feature family (``minor_features.py``), SAM's collapse boundary and the positive
control (``regimes.py``)."""

from biasaudit.claims.sam.torch import minor_features, regimes

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = minor_features.CLAIMS + regimes.CLAIMS
FIGURES = minor_features.FIGURES + regimes.FIGURES
