"""Seed-level statistics of the SAM network experiments, fixed before the runs (notes/validation-sam.md).

==========================  ==========================================================================
function                    what it computes
==========================  ==========================================================================
:func:`area_effect`         the pre-registered minor-feature statistic: per paired seed s,
                            ``A_s = mean_a [m_SAM(a) - m_GD(a)]`` over the progress levels a (training
                            accuracy, or training loss) that both runs reach; a pair in which either
                            run did not train (or diverged) counts as ``A_s = 0`` (no evidence either
                            way), never dropped; its 95 % interval and one-sided p-value
:func:`one_sided_p`         p-value of "mean > 0" (direction +1) from the paired values: the larger of
                            the Student-t and the bootstrap p (the interval is their hull, too)
:func:`holm`                Holm's step-down adjustment of a family of p-values
:func:`clopper_pearson`     exact binomial interval of a training fraction
:func:`logistic_boundary`   P(train) = sigmoid(b (log alpha - log alpha_50)), fitted with a weak ridge
                            on b (complete separation stays finite), alpha_50 with a seed bootstrap
:func:`t_power`             power of the one-sided paired t test at n seeds for a standardized effect
:func:`paired_effect`       the fixed-alpha experiments' statistic (:mod:`~biasaudit.validation.sam_experiments`):
                            per usable seed, SAM - GD raw at the same final step and accuracy-matched
                            (below); seeds whose GD or SAM run did not train are excluded, and listed
:func:`patch_lead`          which patch a run learns first, ``t_major - t_minor`` in steps
:func:`verdict_from_interval`  confirmed / refuted / undecided from an effect interval and a predicted sign
==========================  ==========================================================================

A statistic over many progress levels averages the evaluation noise: the minor-feature curves jump by
about 0.1 between evaluations, and a single final evaluation can flip a verdict (it did:
``sam.torch.minor_mass_inputgrad`` was refuted in one audit and undecided in another with 5 seeds at one
final point).

Accuracy matching (:func:`paired_effect`). For each usable seed s: ``raw_s = m_SAM(T) - m_GD(T)`` at the
same final step T, and ``matched_s = m_SAM(T) - m_GD(a_SAM(T))``: GD's metric interpolated (linearly,
between the two evaluations that bracket the first time GD's accuracy reaches that value) at SAM's final
training accuracy ("slow training fakes the effect"). If GD never reached SAM's final accuracy, the roles
swap: SAM's curve is interpolated at GD's final accuracy. With accuracy ``levels`` (the patch task) the same
comparison is averaged over fixed accuracy levels (both runs interpolated at the first crossing of each
level), to see which patch is learnt *first*. The 95 % interval of the mean over seeds is the hull of a
percentile bootstrap over seeds (:data:`N_BOOT` resamples) and a Student-t interval (the bootstrap alone
under-covers at 5 seeds). An image-level bootstrap (images and seeds pooled) is reported too, for
comparison only: it looks far more certain than it is.

Verdict rule (:func:`verdict_from_interval`): with predicted sign s (+1: SAM more minor-focused), the effect
interval [lo, hi] gives ``confirmed`` if s*[lo, hi] > 0, ``refuted`` if s*[lo, hi] < 0, else ``undecided``;
fewer than :data:`MIN_SEEDS` usable seeds is ``undecided``.
"""

from __future__ import annotations

import math

import numpy as np

from biasaudit.validation.decision import MIN_SEEDS, N_BOOT, seed_interval  # one seed interval, one minimum

__all__ = ["CI_LEVEL", "N_BOOT", "MIN_SEEDS", "FAMILY_LEVEL", "metric_at_level", "area_effect", "effect_summary",
           "one_sided_p", "two_sided_p", "holm", "holm_levels", "clopper_pearson", "logistic_boundary", "fit_logistic_batch",
           "fit_logistic_reference", "t_power", "bootstrap_mean_ci", "t_mean_ci", "paired_effect", "patch_lead",
           "verdict_from_interval", "summary_line"]

CI_LEVEL = 0.95       # every interval of the SAM network experiments
FAMILY_LEVEL = 0.05   # Holm: family-wise error of the minor-feature claims (two-sided: 0.025 per side)
UNTRAINED_EFFECT = 0.0  # a pair with a run that never trained: no evidence for or against minor-first


def metric_at_level(progress, metric, level: float, *, decreasing: bool = False) -> float:
    """The metric where ``progress`` first reaches ``level`` (>= for accuracy; <= with ``decreasing``,
    for the loss), linear between the two evaluations that bracket the crossing; NaN if never reached."""
    p, m = np.asarray(progress, float), np.asarray(metric, float)
    hits = np.nonzero(p <= level if decreasing else p >= level)[0]
    if hits.size == 0:
        return math.nan
    i = int(hits[0])
    if i == 0 or p[i] == p[i - 1]:
        return float(m[i])
    w = (level - p[i - 1]) / (p[i] - p[i - 1])
    return float(m[i - 1] + w * (m[i] - m[i - 1]))


def _bootstrap_means(v: np.ndarray, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)


def one_sided_p(values, direction: int = 1) -> float:
    """p-value of ``direction * mean > 0``: max of the one-sided Student-t p and the bootstrap p (the share
    of bootstrap means on the wrong side of 0). 1.0 for fewer than 2 values or zero spread with mean <= 0."""
    from scipy import stats

    v = direction * np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return 1.0
    sd = v.std(ddof=1)
    if sd == 0:
        return 0.0 if v.mean() > 0 else 1.0
    p_t = float(stats.t.sf(v.mean() / (sd / math.sqrt(v.size)), v.size - 1))
    p_boot = float(np.mean(_bootstrap_means(v) <= 0))
    return max(p_t, p_boot)


def area_effect(gd_runs: list[dict], sam_runs: list[dict], metric: str, levels, *, match_on: str = "acc",
                direction: int = 1, level: float = CI_LEVEL) -> dict:
    """The paired area statistic (module docstring). ``match_on`` is ``"acc"`` (levels of training
    accuracy, reached from below) or ``"loss"`` (levels of training loss, reached from above)."""
    decreasing = match_on == "loss"
    gd_by_seed = {r["config"]["seed"]: r for r in gd_runs}
    values, seeds, imputed, per_level = [], [], {}, []
    for sam in sam_runs:
        s = sam["config"]["seed"]
        gd = gd_by_seed.get(s)
        if gd is None:
            continue
        seeds.append(s)
        if gd["status"] != "ok" or sam["status"] != "ok":
            imputed[str(s)] = f"GD {gd['status']}, SAM {sam['status']}"
            values.append(UNTRAINED_EFFECT)
            continue
        g, m = gd["curves"], sam["curves"]
        diffs = [metric_at_level(m[match_on], m[metric], a, decreasing=decreasing)
                 - metric_at_level(g[match_on], g[metric], a, decreasing=decreasing) for a in levels]
        finite = [d for d in diffs if math.isfinite(d)]
        per_level.append(diffs)
        if not finite:
            imputed[str(s)] = "no common progress level"
            values.append(UNTRAINED_EFFECT)
            continue
        values.append(float(np.mean(finite)))
    return {"metric": metric, "match_on": match_on, "levels": list(levels),
            **effect_summary(values, seeds, imputed, direction=direction, level=level)}


def effect_summary(values, seeds, imputed, *, direction: int = 1, level: float = CI_LEVEL) -> dict:
    """Seeds, values, mean, sd, the 95 % interval and both one-sided p-values of paired seed values."""
    v = np.asarray(values, float)
    return {"seeds": list(seeds), "values": [round(float(x), 6) for x in v], "imputed": imputed,
            "mean": float(v.mean()) if v.size else math.nan,
            "sd": float(v.std(ddof=1)) if v.size > 1 else math.nan,
            "ci": seed_interval(v, level), "level": level,
            "p_predicted": one_sided_p(v, direction), "p_opposite": one_sided_p(v, -direction)}


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values: sort ascending, p_(i) * (m - i + 1), running maximum, capped at 1."""
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m, running, out = len(order), 0.0, {}
    for i, key in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[key]))
        out[key] = running
    return out


def two_sided_p(values) -> float:
    """Two-sided p-value of mean ≠ 0: twice the smaller :func:`one_sided_p`, capped at 1."""
    return min(1.0, 2 * min(one_sided_p(values, 1), one_sided_p(values, -1)))


def holm_levels(values: dict, level: float) -> dict[str, float]:
    r"""The level at which each member of a Holm family reads its interval: :math:`\alpha\, p / p_{Holm}` (at most
    α), p the member's :func:`two_sided_p`, so that the member's p is at most its level exactly when its
    Holm-adjusted p is at most α.

    Parameters
    ----------
    values : dict
        Member name -> its seed values.
    level : float
        α, the family-wise level.

    Returns
    -------
    dict
        Member name -> its level.

    Examples
    --------
    >>> levels = holm_levels({"a": [1.0, 1.1, 0.9, 1.2], "b": [0.1, -0.2, 0.3, 0.0]}, 0.05)
    >>> round(levels["a"], 4), levels["b"]
    (0.025, 0.05)
    """
    p = {m: two_sided_p(v) for m, v in values.items()}
    adjusted = holm(p)
    return {m: min(level, level * p[m] / adjusted[m]) if adjusted[m] > 0 else level for m in values}


def clopper_pearson(k: int, n: int, level: float = CI_LEVEL) -> tuple[float, float]:
    """Exact binomial interval for k successes in n trials."""
    from scipy import stats

    if n == 0:
        return (0.0, 1.0)
    q = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(q, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - q, k + 1, n - k))
    return (lo, hi)


RIDGE = 0.01  # weak penalty on the logistic slope: finite under complete separation, negligible otherwise


def _nll(x: np.ndarray, t: np.ndarray, a, b):
    """Penalized negative log-likelihood of P = sigmoid(a + b x), rows of ``t`` (and of a, b) fitted apart."""
    z = a[..., None] + b[..., None] * x
    return np.sum(np.logaddexp(0.0, z) - t * z, axis=-1) + 0.5 * RIDGE * b ** 2


def fit_logistic_batch(x: np.ndarray, t: np.ndarray, *, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    r"""(intercept a, slope b) per row of ``t`` for P = sigmoid(a + b x), by penalized maximum likelihood.

    Minimizes :math:`\sum_i \log(1 + e^{z_i}) - t_i z_i + \tfrac{R}{2} b^2`, :math:`z = a + b x` (ridge R on
    b only), with Newton steps on all rows at once and step halving until the objective does not rise. When
    every t of a row is equal the optimum lies at infinite |a|: the iteration stops at ``max_iter`` with a
    large |a| and b near 0, which callers read as "no boundary" (as the reference fit does).
    :func:`fit_logistic_reference` is the plain one-row reference (scipy Nelder-Mead).
    """
    t = np.atleast_2d(np.asarray(t, float))
    a, b = np.zeros(t.shape[0]), np.zeros(t.shape[0])
    f = _nll(x, t, a, b)
    active = np.ones(t.shape[0], bool)
    for _ in range(max_iter):
        z = a[:, None] + b[:, None] * x
        p = 0.5 * (1.0 + np.tanh(0.5 * z))  # sigmoid without overflow
        w = p * (1.0 - p)
        g = np.stack([np.sum(p - t, axis=1), np.sum((p - t) * x, axis=1) + RIDGE * b], axis=1)
        h00, h01, h11 = np.sum(w, axis=1), np.sum(w * x, axis=1), np.sum(w * x * x, axis=1) + RIDGE
        det = np.maximum(h00 * h11 - h01 ** 2, 1e-300)
        da = -(h11 * g[:, 0] - h01 * g[:, 1]) / det
        db = -(h00 * g[:, 1] - h01 * g[:, 0]) / det
        da, db = np.where(active, da, 0.0), np.where(active, db, 0.0)
        step = np.ones_like(a)
        for _ in range(40):  # halve a row's step until its objective does not rise
            trial = _nll(x, t, a + step * da, b + step * db)
            worse = trial > f + 1e-12 * np.abs(f)
            if not worse.any():
                break
            step = np.where(worse, 0.5 * step, step)
        a, b = a + step * da, b + step * db
        f = _nll(x, t, a, b)
        active &= np.abs(step * da) + np.abs(step * db) > 1e-12 * (1.0 + np.abs(a) + np.abs(b))
        if not active.any():
            break
    return a, b


def fit_logistic_reference(x: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """One row of :func:`fit_logistic_batch` by scipy's Nelder-Mead on the same objective (tests)."""
    from scipy.optimize import minimize

    def nll(theta):
        return float(_nll(x, np.asarray(t, float)[None], theta[:1], theta[1:])[0])

    res = minimize(nll, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10,
                                                                     "maxiter": 4000})
    return float(res.x[0]), float(res.x[1])


def logistic_boundary(alphas, trained, *, n_boot: int = 400, seed: int = 0) -> dict:
    """Fit ``P(train | alpha) = sigmoid(b (log alpha - log alpha_50))`` to ``trained[i, s]`` (grid point i,
    seed s; booleans). alpha_50's interval resamples seeds (whole columns, the grid points stay paired).
    ``alpha_50`` is None when the fitted slope is not positive (no rising boundary)."""
    alphas = np.asarray(alphas, float)
    t = np.asarray(trained, float)
    x = np.repeat(np.log(alphas), t.shape[1])

    span = (x.min() - math.log(1e3), x.max() + math.log(1e3))  # alpha_50 beyond 1000x the grid: no boundary

    def alpha50(rows):
        a, b = fit_logistic_batch(x, rows)
        with np.errstate(divide="ignore", invalid="ignore"):
            log50 = np.where(b > 0, -a / b, math.nan)
        inside = (log50 >= span[0]) & (log50 <= span[1])
        return np.where(inside, np.exp(np.where(inside, log50, 0.0)), math.nan), b

    a50, slope = (float(v[0]) for v in alpha50(t.ravel()[None]))
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, t.shape[1], t.shape[1]) for _ in range(n_boot)]
    boots = alpha50(np.stack([t[:, c].ravel() for c in columns]))[0]
    finite = boots[np.isfinite(boots)]
    ci = ((float(np.quantile(finite, 0.025)), float(np.quantile(finite, 0.975)))
          if finite.size >= 0.9 * n_boot else (math.nan, math.nan))
    return {"alpha_50": a50 if math.isfinite(a50) else None, "slope": slope, "ci": ci,
            "bootstrap_finite": int(finite.size), "n_boot": n_boot}


def t_power(effect_size: float, n: int, *, alpha: float = 0.025) -> float:
    """Power of the one-sided one-sample t test (level ``alpha``) at n seeds for the standardized effect
    ``mean / sd`` (noncentral t)."""
    from scipy import stats

    if n < 2:
        return 0.0
    crit = stats.t.ppf(1 - alpha, n - 1)
    return float(stats.nct.sf(crit, n - 1, effect_size * math.sqrt(n)))


def detectable_effect(n: int, *, power: float = 0.8, alpha: float = 0.025) -> float:
    """The standardized effect (mean / sd) that the one-sided t test at n seeds detects with ``power``."""
    from scipy.optimize import brentq

    if n < 2:
        return math.inf
    return float(brentq(lambda d: t_power(d, n, alpha=alpha) - power, 0.0, 50.0))


__all__ += ["detectable_effect"]


def diluted_effect(effect_size: float, untrained_share: float) -> float:
    """The standardized effect left when a share q of the seed values is the imputed 0 of an untrained pair.

    With d = mu / sigma on the trained pairs, the mixture has mean (1 - q) mu and variance
    (1 - q) sigma^2 + q (1 - q) mu^2, so d_q = (1 - q) d / sqrt((1 - q) + q (1 - q) d^2)."""
    q = float(untrained_share)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"untrained_share: must lie in [0, 1], got {q!r}")
    if q == 1.0:
        return 0.0
    d = float(effect_size)
    return (1 - q) * d / math.sqrt((1 - q) + q * (1 - q) * d * d)


__all__ += ["diluted_effect"]


# ----------------------------------------------------------- the fixed-alpha experiments: accuracy matching
def bootstrap_mean_ci(values, *, level: float = CI_LEVEL, n_boot: int = N_BOOT, seed: int = 0):
    """Percentile bootstrap interval of the mean (NaNs dropped); (nan, nan) for fewer than 2 values."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    means = _bootstrap_means(v, n_boot, seed)
    q = (1 - level) / 2
    return (float(np.quantile(means, q)), float(np.quantile(means, 1 - q)))


def t_mean_ci(values, *, level: float = CI_LEVEL):
    """Student-t interval of the mean (NaNs dropped); (nan, nan) for fewer than 2 values."""
    from scipy import stats

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    half = stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return (float(v.mean() - half), float(v.mean() + half))


def _hull(a, b):
    return (float(min(a[0], b[0])), float(max(a[1], b[1])))


def paired_effect(gd_runs: list[dict], sam_runs: list[dict], metric: str, *,
                  levels: tuple[float, ...] | None = None) -> dict:
    """Seed-level paired SAM - GD differences of ``metric`` (raw at the same step, and accuracy-matched).

    ``levels=None`` matches at SAM's final accuracy (GD interpolated); a tuple of accuracy levels compares
    both runs where each first reaches each level, averaged over the levels both reach.
    """
    gd_by_seed = {r["config"]["seed"]: r for r in gd_runs}
    raw, matched, seeds, excluded, image_diffs = [], [], [], {}, []
    for sam in sam_runs:
        s = sam["config"]["seed"]
        gd = gd_by_seed.get(s)
        if gd is None:
            excluded[s] = "no GD run"
            continue
        if gd["status"] != "ok" or sam["status"] != "ok":
            excluded[s] = f"GD {gd['status']}, SAM {sam['status']}"
            continue
        g, m = gd["curves"], sam["curves"]
        if levels is None:
            gd_matched = metric_at_level(g["acc"], g[metric], m["acc"][-1])
            diff = m[metric][-1] - gd_matched
            if not math.isfinite(gd_matched):  # SAM ended more accurate than GD ever was: match the other way
                diff = metric_at_level(m["acc"], m[metric], g["acc"][-1]) - g[metric][-1]
        else:
            diffs = [metric_at_level(m["acc"], m[metric], a) - metric_at_level(g["acc"], g[metric], a)
                     for a in levels]
            diffs = [d for d in diffs if math.isfinite(d)]
            diff = float(np.mean(diffs)) if diffs else math.nan
        if not math.isfinite(diff):
            excluded[s] = "no common accuracy" if levels is None else "no common accuracy level"
            continue
        seeds.append(s)
        raw.append(m[metric][-1] - g[metric][-1])
        matched.append(diff)
        if metric == "cam_low" and sam.get("final_cam_low_images") and gd.get("final_cam_low_images"):
            image_diffs.extend(np.asarray(sam["final_cam_low_images"], float)
                               - np.asarray(gd["final_cam_low_images"], float))
    out = {"metric": metric, "seeds": seeds, "excluded": {str(k): v for k, v in excluded.items()},
           "raw": raw, "matched": matched,
           "raw_mean": float(np.mean(raw)) if raw else math.nan,
           "matched_mean": float(np.mean(matched)) if matched else math.nan,
           "raw_ci": _hull(bootstrap_mean_ci(raw), t_mean_ci(raw)),
           "matched_ci_bootstrap": bootstrap_mean_ci(matched), "matched_ci_t": t_mean_ci(matched)}
    out["matched_ci"] = _hull(out["matched_ci_bootstrap"], out["matched_ci_t"])
    if image_diffs:
        out["raw_ci_images"] = bootstrap_mean_ci(image_diffs)
    return out


def patch_lead(runs: list[dict], level: float = 0.9) -> dict:
    """Which patch is learnt first, per run: ``lead = t_major - t_minor`` (steps; > 0 means minor first).

    ``t_minor`` is the first evaluated step at which the accuracy with the *major* patch ablated (the model
    predicting from the faint patch alone) reaches ``level``; ``t_major`` likewise with the minor patch
    ablated. A patch never learnt within the horizon T is censored at T + eval_every. Only ``ok`` runs count.
    """
    leads, seeds, excluded = [], [], {}
    for r in runs:
        if r["status"] != "ok":
            excluded[str(r["config"]["seed"])] = r["status"]
            continue
        c = r["curves"]
        horizon = c["step"][-1] + r["config"]["eval_every"]

        def first(key):
            hits = [s for s, a in zip(c["step"], c[key]) if a >= level]
            return hits[0] if hits else horizon

        leads.append(float(first("acc_no_minor") - first("acc_no_major")))
        seeds.append(r["config"]["seed"])
    ci = _hull(bootstrap_mean_ci(leads), t_mean_ci(leads))
    return {"metric": "minor_lead_steps", "level": level, "seeds": seeds, "excluded": excluded, "values": leads,
            "mean": float(np.mean(leads)) if leads else math.nan, "ci": ci}


def verdict_from_interval(ci, direction: int, n_seeds: int) -> tuple[str, float]:
    """('confirmed'|'refuted'|'undecided', error) for an effect interval and a predicted sign.

    ``error = max(0, -direction * lo_or_hi)``: 0 when the interval lies on the predicted side of 0, the
    distance the interval sits on the wrong side otherwise (compared with a tolerance of 0).
    """
    lo, hi = ci
    if n_seeds < MIN_SEEDS or not (math.isfinite(lo) and math.isfinite(hi)):
        return "undecided", math.nan
    a, b = sorted((direction * lo, direction * hi))
    if a > 0:
        return "confirmed", 0.0
    if b < 0:
        return "refuted", float(-b)
    return "undecided", float(-a)


def summary_line(effect: dict, direction: int = 1) -> str:
    """One line of a :func:`paired_effect`: matched and raw means with their intervals, seeds, verdict."""
    verdict, _ = verdict_from_interval(effect["matched_ci"], direction, len(effect["seeds"]))
    lo, hi = effect["matched_ci"]
    rlo, rhi = effect["raw_ci"]
    return (f"{effect['metric']}: matched SAM-GD {effect['matched_mean']:+.4f} [{lo:+.4f}, {hi:+.4f}], "
            f"raw {effect['raw_mean']:+.4f} [{rlo:+.4f}, {rhi:+.4f}], {len(effect['seeds'])} seeds "
            f"({verdict}; excluded {effect['excluded'] or 'none'})")
