r"""What the paper 1 foundation claim modules share: the paper, sympy symbols, parameter helpers.

Symbols: ``mu`` data (0 < mu_1 < ... < mu_d), ``alpha`` balanced init, ``rho`` radius, ``eta`` step, ``L``
depth, ``tau`` rescaled time, ``h_k = eta sigma(-z~_k)`` the Euler step of one discrete step.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from biasaudit.domain import Choice, Vector

__all__ = []

EPS = np.finfo(float).eps
PAPER = "sam"

_mu_s, _a_s, _r_s, _t_s, _w_s = sp.symbols("mu alpha rho tau w", positive=True)
_L_s = sp.Symbol("L", integer=True, positive=True)


def _arr(params, key):
    return np.asarray(params[key], dtype=float)


def _mu_domain(d="d", lo=0.5, hi=1.5, gaps=(0.2, 1.0)):
    return Vector(d, lo, hi, increasing=gaps)


def _sigma_neg(z):
    from scipy.special import expit

    return float(expit(-z))


# the algorithms and normalizations of the sam.flow and sam.discrete claims
_ALG_DOMAIN = {"algorithm": Choice(("gd", "linf", "l2")), "normalization": Choice(("joint", "layer"))}
