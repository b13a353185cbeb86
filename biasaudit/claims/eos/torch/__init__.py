"""``eos.torch.*``: paper 2 on trained networks (experiment claims): the learning-rate sweeps E1-E5 and the
sharpness cross-check (``sweeps.py``), E1 and E2 per architecture (``architectures.py``) and E3 per architecture
(``measures.py``)."""

from biasaudit.claims.eos.torch import architectures, measures, sweeps

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = sweeps.CLAIMS + architectures.CLAIMS + measures.CLAIMS
FIGURES = sweeps.FIGURES + architectures.FIGURES
