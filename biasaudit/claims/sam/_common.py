r"""What the paper 1 foundation claim modules share: the paper, parameter helpers. Their statements are written in
the symbols and formulas of :mod:`biasaudit.theory` (``sam_fields``, ``sam_gd``, ``sam_linf``: each has ``SYMBOLS``).

Notation: ``mu`` data (0 < mu_1 < ... < mu_d), ``alpha`` balanced init, ``rho`` radius, ``eta`` step, ``L``
depth, ``tau`` rescaled time, ``h_k = eta sigma(-z~_k)`` the Euler step of one discrete step.
"""

from __future__ import annotations

import numpy as np

from biasaudit.domain import Choice, Vector

__all__ = []

EPS = np.finfo(float).eps
PAPER = "sam"

def _arr(params, key):
    return np.asarray(params[key], dtype=float)


def _mu_domain(d="d", lo=0.5, hi=1.5, gaps=(0.2, 1.0)):
    return Vector(d, lo, hi, increasing=gaps)


def _sigma_neg(z):
    from scipy.special import expit

    return float(expit(-z))


# the algorithms and normalizations of the sam.flow and sam.discrete claims
_ALG_DOMAIN = {"algorithm": Choice(("gd", "linf", "l2")), "normalization": Choice(("joint", "layer"))}
