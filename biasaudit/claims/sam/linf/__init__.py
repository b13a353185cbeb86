"""``sam.linf.*``: l_inf-SAM on diagonal networks: closed form, zero-hit time, unstable equilibrium, chatter
bound and unbalanced growth at L = 2 (``closed_forms.py``); the limit rules at L = 2 and L >= 3 and the
parity of L (``limits.py``)."""

from biasaudit.claims.sam.linf import closed_forms, limits

__all__ = ["CLAIMS"]

CLAIMS = closed_forms.CLAIMS + limits.CLAIMS
