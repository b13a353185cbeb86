"""``eos.torch.*``: paper 2 on trained networks (experiment claims): the learning-rate sweeps E1-E5 and the
sharpness cross-check (``sweeps.py``), and E2 per architecture (``architectures.py``)."""

from biasaudit.claims.eos.torch import architectures, sweeps

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = sweeps.CLAIMS + architectures.CLAIMS
FIGURES = sweeps.FIGURES + architectures.FIGURES
