"""The multi-point diagonal network: the dominant index j† over (iteration, alpha) for l2-SAM and GD.

Separable data with several points (:func:`multipoint_data`; feature j has scale mu_j), the depth-2 diagonal
linear network from a balanced init alpha*1, stepped by sam-core's numba kernel
(:func:`biasaudit.numerics.sam_discrete.run_sam`); :func:`multipoint_jdagger` records j† = argmax_j beta_j.
Numbers only: the heatmap is drawn by :func:`biasaudit.figures.sam_torch.plot_multipoint_heatmap`.
"""

from __future__ import annotations

import numpy as np

from biasaudit.plumbing import InputError, positive_int

__all__ = ["multipoint_data", "multipoint_jdagger"]


def multipoint_data(mu=(1.0, 1.5, 2.0, 2.5), n: int = 8, spread: float = 0.3, seed: int = 0):
    r"""n positive points :math:`x_i = \mu\odot(1 + \text{spread}\cdot U(-1, 1))` with :math:`y_i = +1`: separable,
    feature j has scale :math:`\mu_j`.

    Parameters
    ----------
    mu : array_like
        The feature scales, strictly positive and strictly increasing.
    n : int
        The number of points, >= 1.
    spread : float
        The relative spread, in [0, 1).
    seed : int
        The generator's seed.

    Returns
    -------
    tuple of numpy.ndarray
        X, shape (n, d), every entry > 0, and y, shape (n,), all +1.

    Raises
    ------
    InputError
        If ``mu`` is not strictly positive and increasing, ``spread`` is not in [0, 1), or ``n`` < 1.

    Examples
    --------
    >>> X, y = multipoint_data(n=3)
    >>> X.shape, y.tolist(), bool((X > 0).all())
    ((3, 4), [1.0, 1.0, 1.0], True)
    """
    from biasaudit.plumbing import positive_increasing

    mu = positive_increasing("mu", mu)
    if not 0 <= spread < 1:
        raise InputError("spread", "must lie in [0, 1) (keeps every feature positive)", spread)
    rng = np.random.default_rng(seed)
    return mu * (1 + spread * rng.uniform(-1, 1, size=(positive_int("n", n), mu.size))), np.ones(n)


def multipoint_jdagger(X, y, alphas, *, rho: float = 0.1, eta: float = 0.05, steps: int = 20000,
                       record_every: int = 20, algorithm: str = "l2", collapsed_below: float | None = None) -> dict:
    r""":math:`j^\dagger` (iteration, α) = :math:`\arg\max_j\beta_j` (1-based) of the depth-2 diagonal network, balanced
    init α·1.

    Uses the numba kernel :func:`biasaudit.numerics.sam_discrete.run_sam`. Entries where :math:`\max_j\beta_j <`
    ``collapsed_below`` (default :math:`0.05\rho^2`: the plateau has :math:`\beta \approx \rho^2/2\,e_1`, while
    the collapsed discrete iterates chatter at :math:`\beta \sim (\eta\mu\rho)^2`) are 0; iterations after
    divergence are −1. Step 0 (all :math:`\beta_j` tied) is left out.

    Parameters
    ----------
    X : array_like
        The data, shape (n, d).
    y : array_like
        The labels, shape (n,).
    alphas : array_like
        The balanced initial weights α, shape (k,).
    rho : float
        The SAM radius ρ.
    eta : float
        The step size η.
    steps : int
        The iterations of each run.
    record_every : int
        Record every this many iterations.
    algorithm : str
        ``"l2"`` (the default), ``"linf"`` or ``"gd"``.
    collapsed_below : float, optional
        Below this :math:`\max_j\beta_j` an entry counts as collapsed.

    Returns
    -------
    dict
        ``steps`` (m,), ``alphas``, ``jdagger`` (k, m), ``loss`` (k, m), ``algorithm``, ``rho`` and ``eta``.

    Raises
    ------
    InputError
        If an input breaks a rule of :func:`~biasaudit.numerics.sam_discrete.run_sam`.
    """
    from biasaudit.numerics.sam_discrete import run_sam

    if collapsed_below is None:
        collapsed_below = 0.05 * rho**2
    X = np.asarray(X, float)
    alphas = np.asarray(alphas, float)
    m = steps // record_every + 1 + (1 if steps % record_every else 0)
    jd = np.full((alphas.size, m), -1, dtype=np.int64)
    loss = np.full((alphas.size, m), np.nan)
    rec_steps = None
    for i, a in enumerate(alphas):
        tr = run_sam(np.full((2, X.shape[1]), a), X, y, algorithm=algorithm, rho=rho, eta=eta, steps=steps,
                     record_every=record_every)
        k = len(tr.steps)
        jd[i, :k] = np.where(tr.beta.max(axis=1) < collapsed_below, 0, tr.beta.argmax(axis=1) + 1)
        loss[i, :k] = tr.loss
        if k == m:
            rec_steps = tr.steps
    if rec_steps is None:
        rec_steps = np.append(np.arange(0, steps + 1, record_every), [] if steps % record_every == 0 else [steps])
    return {"steps": rec_steps[1:], "alphas": alphas, "jdagger": jd[:, 1:], "loss": loss[:, 1:],
            "algorithm": algorithm, "rho": rho,
            "eta": eta}
