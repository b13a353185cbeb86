"""``eos.central_flow.*``: the central flow (gradient flow held at S = 2/η) as a predictor of where GD lands
above η_c (``endpoint.py``: GD's endpoint, the norm curve and its minimum, the failing sides near η_c and at
large η) and below it (``below.py``: the flow is gradient flow), and the kernel against its independent solver
(``crosscheck.py``)."""

from biasaudit.claims.eos.central_flow import below, crosscheck, endpoint

__all__ = ["CLAIMS"]

CLAIMS = endpoint.CLAIMS + below.CLAIMS + crosscheck.CLAIMS
