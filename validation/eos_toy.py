r"""Paper 2's theory model as a torch network: the shared-weight diagonal network on one data point.

f_w(x) = ⟨w ⊙ w, x⟩ = Σ_i x_i w_i², loss L = ½ r² with r = f_w(x) − y (the loss ``half_sq`` of
:mod:`biasaudit.validation.gd_trainer`, mean over the one point). The theory layer and the numba GD kernel
(:mod:`biasaudit.numerics.eos_gd`) solve this model independently of torch, so a torch sweep of it runs the
networks' pipeline (gradient-flow proxy, full-batch GD, eigsh sharpness, the statistics of
:mod:`biasaudit.validation.eos_stats`) where the answer is known: the positive control of the network claims.

The data point is fixed (:data:`TOY_X`, :data:`TOY_Y`); the seed draws the initialisation
w₀ = :data:`TOY_W0` · exp(:data:`TOY_W0_SPREAD` · z), z ~ N(0, I) with ``torch.manual_seed(seed)``; every
seed starts at a small init (r₀ < 0), where η_c = 2/s_GF is the theory's prediction.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["TOY_X", "TOY_Y", "TOY_W0", "TOY_W0_SPREAD", "SharedDiagonal", "toy_data"]

TOY_X = (0.7, 1.3, 2.1)
TOY_Y = 1.5
TOY_W0 = 0.05  # the init scale: r₀ = Σ x_i w0_i² − y ≈ −1.49 < 0 (small init)
TOY_W0_SPREAD = 0.2  # log-normal spread of w₀ between seeds (each seed its own s_GF and η_c)


class SharedDiagonal(torch.nn.Module):
    r""":math:`f_w(x) = \sum_i x_iw_i^2`, one output column; ``w`` drawn as in the module docstring (scaled by
    ``init_scale``).

    Parameters
    ----------
    d : int
        The dimension.
    init_scale : float
        Scales the drawn :math:`w_0` (default 1).
    """

    def __init__(self, d: int, init_scale: float = 1.0):
        super().__init__()
        z = torch.randn(d, dtype=torch.float64)
        self.w = torch.nn.Parameter(init_scale * TOY_W0 * torch.exp(TOY_W0_SPREAD * z))

    def forward(self, X):
        """The outputs :math:`f_w(x)` of each row x of ``X``, shape (n, 1).

        Parameters
        ----------
        X : torch.Tensor
            The inputs, shape (n, d).

        Returns
        -------
        torch.Tensor
            Shape (n, 1).
        """
        return (X * self.w**2).sum(dim=-1, keepdim=True)


class _ToyData:
    def __init__(self):
        X = np.asarray([TOY_X], dtype=float)
        y = np.asarray([TOY_Y], dtype=float)
        self.X_train, self.y_train, self.X_test, self.y_test = X, y, X, y
        self.num_classes = 1
        self.name = "toy"


def toy_data() -> _ToyData:
    """The one data point (x, y) = (:data:`TOY_X`, :data:`TOY_Y`), as training and test set.

    Returns
    -------
    object
        With ``X_train``, ``y_train``, ``X_test``, ``y_test`` (numpy), ``num_classes`` = 1 and ``name`` = ``"toy"``.

    Examples
    --------
    >>> data = toy_data()
    >>> data.X_train.tolist(), data.y_train.tolist(), data.name
    ([[0.7, 1.3, 2.1]], [1.5], 'toy')
    """
    return _ToyData()
