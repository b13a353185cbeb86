"""``eos.torch.*``: paper 2 on trained networks (experiment claims): the learning-rate sweeps E1-E5 and the
sharpness cross-check (``sweeps.py``), E1 and E2 per architecture (``architectures.py``), E3 per architecture
(``measures.py``) and the central flow (``central_flow.py``)."""

from biasaudit.claims.eos.torch import architectures, central_flow, measures, sweeps

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = sweeps.CLAIMS + architectures.CLAIMS + measures.CLAIMS + central_flow.CLAIMS
FIGURES = sweeps.FIGURES + architectures.FIGURES + central_flow.FIGURES
