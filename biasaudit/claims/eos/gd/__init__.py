"""``eos.gd.*``: GD on the shared-weight diagonal model around eta_c = 2/s_GF (``edge.py``: tracking 2/eta,
the stability edge, the kink), its outcomes and endpoints (``outcomes.py``), and the numba sweep against its
plain reference (``crosscheck.py``)."""

from biasaudit.claims.eos.gd import crosscheck, edge, outcomes

__all__ = ["CLAIMS"]

CLAIMS = edge.CLAIMS + outcomes.CLAIMS + crosscheck.CLAIMS
