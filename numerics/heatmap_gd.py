r"""Method ``"gd"`` of the τ heatmap: gradient flow (ρ = 0), in closed form — the baseline heatmap.

With c = 0 the rescaled field is w_j' = μ_j w_j, so ln w_j = ln α_j + μ_j τ exactly: j† = argmax_j ln w_j,
ln S = ½ logsumexp_j 2(ln μ_j + ln w_j) and the loss ln(1 + e^{−z}), ln z = logsumexp_j (ln μ_j + 2 ln w_j),
all in log space (nothing overflows). Every α escapes (status +1). Discrete GD over iterations is
:mod:`biasaudit.numerics.heatmap_discrete` with c = 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gd_flow_heatmap"]


def gd_flow_heatmap(alphas, mu, times):
    r"""j†, loss and ln S of gradient flow from every row of ``alphas`` (n, d) at ``times``, and the status
    (+1). Returns ``(jd, loss, logS, status)``.

    Closed form at L = 2: :math:`\ln w_j = \ln\alpha_j + \mu_j\tau`; inputs are validated by
    :func:`biasaudit.numerics.heatmap.dominant_index_heatmap`.

    Parameters
    ----------
    alphas : numpy.ndarray
        The initial weights, shape (n, d), > 0.
    mu : numpy.ndarray
        The data point, shape (d,).
    times : numpy.ndarray
        The rescaled times τ, shape (m,).

    Returns
    -------
    tuple of numpy.ndarray
        ``jd`` (n, m) 1-based :math:`\arg\max_j\beta_j`, ``loss`` (n, m) the logistic loss, ``logS`` (n, m)
        ln S, and ``status`` (n,), all +1 (gradient flow never collapses).

    Examples
    --------
    >>> import numpy as np
    >>> jd, loss, log_S, status = gd_flow_heatmap(np.array([[0.1, 0.1], [0.5, 0.1]]), np.array([1.0, 2.0]),
    ...                                           np.array([0.0, 1.0, 5.0]))
    >>> jd.tolist(), status.tolist()
    ([[1, 2, 2], [1, 1, 2]], [1, 1])
    """
    log_w = np.log(alphas)[:, None, :] + mu * times[None, :, None]
    jd = np.argmax(log_w, axis=2) + 1
    logS = np.logaddexp.reduce(2 * (np.log(mu) + log_w), axis=2) / 2
    log_z = np.logaddexp.reduce(np.log(mu) + 2 * log_w, axis=2)
    loss = np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0))))
    return jd.astype(np.int64), loss, logS, np.ones(alphas.shape[0], dtype=np.int64)
