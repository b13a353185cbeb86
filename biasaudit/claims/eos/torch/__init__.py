"""``eos.torch.*``: paper 2 on trained networks (experiment claims): the learning-rate sweeps E1-E5 and the
sharpness cross-check (``sweeps.py``), E1 and E2 per architecture (``architectures.py``), E3 per architecture
(``measures.py``), E4 in time (``dynamics.py``), E5 test error (``generalization.py``), the central flow
(``central_flow.py``) and the calibration of their decisions on placebo data (``calibration.py``)."""

from biasaudit.claims.eos.torch import (architectures, calibration, central_flow, dynamics, generalization, measures,
                                       sweeps)

__all__ = ["CLAIMS", "FIGURES"]

CLAIMS = (sweeps.CLAIMS + architectures.CLAIMS + measures.CLAIMS + dynamics.CLAIMS + generalization.CLAIMS
          + central_flow.CLAIMS + calibration.CLAIMS)
FIGURES = sweeps.FIGURES + architectures.FIGURES + generalization.FIGURES + central_flow.FIGURES
