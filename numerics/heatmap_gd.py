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
    """j†, loss and ln S of gradient flow from every row of ``alphas`` (n, d) at ``times``, and the status
    (+1). Returns ``(jd, loss, logS, status)``."""
    log_w = np.log(alphas)[:, None, :] + mu * times[None, :, None]
    jd = np.argmax(log_w, axis=2) + 1
    logS = np.logaddexp.reduce(2 * (np.log(mu) + log_w), axis=2) / 2
    log_z = np.logaddexp.reduce(np.log(mu) + 2 * log_w, axis=2)
    loss = np.log1p(np.exp(-np.exp(np.minimum(log_z, 700.0))))
    return jd.astype(np.int64), loss, logS, np.ones(alphas.shape[0], dtype=np.int64)
