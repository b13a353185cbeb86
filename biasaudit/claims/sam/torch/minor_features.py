"""Paper 1 ("Minor First, Major Last") on torch networks: claims of kind ``experiment`` (ids ``sam.torch.*``).

=======================================  =====================================================================
claim                                    what is run
=======================================  =====================================================================
``sam.torch.diag_net_matches_numerics``  the torch diagonal network (autograd + the torch SAM optimizer,
                                         float64) against the numba kernels of ``biasaudit.numerics.sam_discrete``:
                                         GD, l_inf-SAM, l2-SAM (joint, per-layer and unnormalized),
                                         depth 2 and 3
``sam.torch.minor_mass_gradcam``         GD vs l2-SAM on a small CNN (MNIST-5k at 14x14) at the regime-2 alpha
                                         found by ``sam.torch.cnn_collapse_boundary``: Grad-CAM mass on
                                         low-intensity pixels, area over training-accuracy levels, 16 paired seeds
``sam.torch.minor_mass_inputgrad``       the same runs, |input gradient| mass on low-intensity pixels
``sam.torch.synthetic_minor_first``      the bright/faint patch task (8x8, regime-2 alpha of the ``patch``
                                         grid): SAM learns the faint patch first
                                         (t_major - t_minor > 0, from patch-ablation accuracy), per seed
``sam.torch.synthetic_minor_reliance``   the same runs: reliance on the faint patch, SAM - GD at the same
                                         training-accuracy levels
``sam.torch.synthetic_minor_gradcam``    the same runs: Grad-CAM share on the faint patch, SAM - GD
=======================================  =====================================================================

Verdicts of the five minor-feature claims (the *family*) come from one pre-registered statistic each, a
two-sided p-value from its paired seed values, and Holm's adjustment across the family at family-wise level
0.05 (:func:`biasaudit.claims.sam.torch.regimes.family_verdict`): adjusted p <= 0.05 decides, on the side of
the mean (confirmed: error 0; refuted: error = how far the 95 % interval reaches past 0); otherwise
undecided. The prediction is a *sign* (+1: SAM more minor-focused than GD); the negative control flips it,
so a decided claim must flip its verdict. Each claim reads a regime grid of
:mod:`biasaudit.validation.sam_regimes` at its regime-2 alpha, the first grid alpha above SAM's measured
collapse boundary (16 paired seeds; a pair with a run that never trained counts as 0 effect, never
dropped): the two MNIST claims the ``cnn`` design, the three patch-task claims the ``patch`` design.

Sizes: the claims (and their figures) run the ``quick`` tier of :data:`biasaudit.validation.sam_regimes.DESIGNS`
under both audit profiles, because it fits the audit's CPU budget and the ledger does not pass the profile
to ``evaluate``. ``BIASAUDIT_SAM_TORCH_TIER=full`` switches claims and figures to the ``full`` tier (hours on
a CPU; meant for a GPU); ``biasaudit validate sam --tier full`` runs it from the command line. The tier used
is recorded in each observation. Importing this module does not import torch.
"""

from __future__ import annotations

import math

import sympy as sp

from biasaudit.claims.sam.torch._common import sam_torch_tier
from biasaudit.claims.sam.torch.regimes import CI_SIDE, FAMILY_READS, _runs_of_design
from biasaudit.domain import Choice, Domain, Fixed
from biasaudit.figures import FigureJob
from biasaudit.ledger import Claim, Observation, Tolerance
from biasaudit.tier import AuditTier, experiment_data_dir

__all__ = ["CLAIMS", "FIGURES"]

rho, alpha, eta = sp.symbols("rho alpha eta", real=True)  # real, not positive: Gt(rho, 0) must stay a relation
a_sam, a_gd = sp.symbols("a_SAM a_GD", positive=True)
m_sam, m_gd = sp.symbols("m_SAM m_GD", nonnegative=True)
k = sp.Symbol("k", integer=True, nonnegative=True)

EXPERIMENT_SAMPLES = {"ci": 1, "thorough": 1}

# ------------------------------------------------------------------------------ diagonal network vs numba
DIAG_CASES = tuple((alg, norm, L) for alg in ("gd", "linf", "l2") for norm in ("joint", "layer", "none")
                   for L in (2, 3) if not (alg == "gd" and norm != "joint") and not (alg == "linf" and norm == "none"))


def _diag_inputs(params):
    import numpy as np

    d = len(params["mu"])
    X = np.array([params["mu"], [1.5, 0.5, 1.0][:d]], dtype=float)
    y = np.array([1.0, 1.0])
    return X, y


def _diag_predict(params, rho_scale: float = 1.0):
    """The torch trajectories (records of W) for every (algorithm, normalization, depth) case."""
    import numpy as np

    from biasaudit.validation.diag_net import torch_sam_trajectory

    X, y = _diag_inputs(params)
    out = {}
    for alg, norm, L in DIAG_CASES:
        W0 = np.tile(np.asarray(params["alpha"], float), (L, 1))
        eta_ = params["eta"] * (rho_scale if alg == "gd" else 1.0)
        tr = torch_sam_trajectory(W0, X, y, algorithm=alg, rho=params["rho"] * rho_scale, eta=eta_,
                                  steps=params["steps"], normalization=norm, record_every=params["record_every"],
                                  reduction=params["reduction"])
        out[f"{alg}/{norm}/L{L}"] = tr.W.tolist()
    return out


def _diag_evaluate(params, predicted):
    import numpy as np

    try:
        from biasaudit.numerics.sam_discrete import run_sam
    except ImportError as exc:
        return Observation(None, math.nan, f"biasaudit.numerics.sam_discrete.run_sam is not available ({exc})", decided=False)
    X, y = _diag_inputs(params)
    errors = {}
    for alg, norm, L in DIAG_CASES:
        W0 = np.tile(np.asarray(params["alpha"], float), (L, 1))
        tr = run_sam(W0, X, y, algorithm=alg, rho=params["rho"], eta=params["eta"], steps=params["steps"],
                     normalization=norm, record_every=params["record_every"])
        torch_W = np.asarray(predicted[f"{alg}/{norm}/L{L}"])
        numba_W = np.asarray(tr.W)
        if numba_W.shape != torch_W.shape:
            errors[f"{alg}/{norm}/L{L}"] = math.inf
            continue
        scale = max(1.0, float(np.max(np.abs(numba_W))))
        errors[f"{alg}/{norm}/L{L}"] = float(np.max(np.abs(torch_W - numba_W)) / scale)
    worst = max(errors, key=errors.get)
    return Observation(errors, errors[worst],
                       f"max |W_torch - W_numba| / max(1, |W|) over {len(errors)} cases; worst {worst}")


DIAG_CLAIM = Claim(
    id="sam.torch.diag_net_matches_numerics",
    paper="sam",
    source="§Setting (algorithms), discrete steps; torch autograd vs numerics/sam_discrete",
    title="torch diagonal network (autograd + torch SAM optimizer) follows the numba GD/SAM trajectories",
    hypotheses=(sp.Gt(eta, 0, evaluate=False), sp.Ge(rho, 0, evaluate=False), sp.Gt(alpha, 0, evaluate=False)),
    statement=sp.Eq(sp.Function("W_torch")(k), sp.Function("W_numba")(k)),
    predict=_diag_predict,
    evaluate=_diag_evaluate,
    tolerance=Tolerance("float64_trajectory", 1e-10,
                        "the same float64 operations in a different order: ~1e-16 per step, amplified at most "
                        "mildly over 200 steps away from sign(0) chatter (alpha > rho keeps gradients nonzero)"),
    domain=Domain({"mu": Fixed((1.0, 2.0, 3.0)), "alpha": Fixed((0.3, 0.25, 0.2)), "rho": Choice((0.05, 0.1)),
                   "eta": Fixed(0.05), "steps": Fixed(200), "record_every": Fixed(50), "reduction": Fixed("mean")}),
    negative_control=lambda params, predicted: _diag_predict(params, rho_scale=1.01),
    kind="experiment",
    samples={"ci": 1, "thorough": 2},
    controls=1,
    notes="rho (eta for GD) moved by 1% must break the 1e-10 agreement",
)


# ------------------------------------------------------------------------------------------ trained CNNs
def _direction_predict(params):
    return 1  # the paper: SAM more minor-focused than GD


def _effect_evaluator(claim_id: str):
    """The verdict of a minor-feature claim: its paired seed values, Holm-adjusted across the family
    (:func:`biasaudit.claims.sam.torch.regimes.family_verdict`)."""
    def evaluate(params, predicted):
        from biasaudit.claims.sam.torch.regimes import family_verdict

        tier = sam_torch_tier(params["tier"])
        direction = int(predicted)
        verdict, error, record = family_verdict(claim_id, direction, tier)
        if record is None:
            return Observation({"tier": tier}, math.nan, f"[{tier} tier] no regime-2 alpha: SAM's boundary was not "
                               "found in the design's grid, so the claim has no place to be tested", decided=False)
        observed = {"tier": tier, **{k: v for k, v in record.items() if k != "control"}}  # dose_response included
        if record.get("control") is not None:
            observed["control_effect"] = {k: record["control"][k] for k in ("mean", "ci", "imputed")}
        lo, hi = record["ci"]
        where = (f"alpha = {record['alpha']} (regime 2: the first grid alpha above SAM's boundary "
                 f"alpha_50 = {record['alpha_50']:.3g})")
        p_holm = record.get("p_holm", math.nan)
        text = (f"[{tier} tier, {record['design']} design] {record['statistic']}, at {where}: {record['mean']:+.4f} "
                f"[{lo:+.4f}, {hi:+.4f}] over {len(record['values'])} seeds ({len(record['imputed'])} "
                f"with an untrained run, counted as 0); Holm-adjusted "
                f"p = {p_holm:.3g} (family of {len(FAMILY_IDS)}, level 0.05); predicted sign {direction:+d}: {verdict}")
        pw = record["power"]
        text += (f"; design power for an effect of {pw['planning_effect_sd_units']} sd: "
                 f"{pw['power_first_holm_step']:.0%}-{pw['power_last_holm_step']:.0%} (80% power from "
                 f"{pw['detectable_effect_80pct_sd_units']:.2f} sd; {pw['power_first_holm_step_diluted']:.0%} at the "
                 f"first step once the {pw['untrained_share']:.0%} untrained pairs dilute it)")
        if record.get("control") is not None:
            c = record["control"]
            text += (f"; GD-like control at alpha = {record['alpha_control']}: {c['mean']:+.4f} "
                     f"[{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}]")
        if record.get("sensitivity"):
            n = record["sensitivity"]
            p_text = "n/a" if n["p_two_sided_unadjusted"] is None else f"{n['p_two_sided_unadjusted']:.3g}"
            text += (f"; sensitivity, next grid alpha = {n['alpha']:g} (not the verdict): {n['mean']:+.4f} "
                     f"[{n['ci'][0]:+.4f}, {n['ci'][1]:+.4f}], unadjusted p = {p_text}")
        text += "; dose-response (alpha: mean) " + ", ".join(f"{a:g}: {m:+.3g}" for a, m, _ in record["dose_response"])
        return Observation(observed, error, text, decided=verdict != "undecided")

    return evaluate


def _flip(params, predicted):
    return -int(predicted)


def _experiment_claim(cid, title, source, statement, notes, matched=True):
    """A minor-feature claim; its design and statistic are its row of ``FAMILY_READS``."""
    design = next(d for c, d, _, _ in FAMILY_READS if c == cid)
    hypotheses = (sp.Gt(rho, 0, evaluate=False), sp.Gt(alpha, 0, evaluate=False)) + ((sp.Eq(a_sam, a_gd),) if matched else ())
    return Claim(
        id=cid, paper="sam", source=source, title=title,
        hypotheses=hypotheses,
        statement=statement,
        predict=_direction_predict,
        evaluate=_effect_evaluator(cid),
        tolerance=CI_SIDE,
        domain=Domain({"tier": AuditTier(sam_torch_tier)}),
        negative_control=_flip,
        kind="experiment",
        samples=dict(EXPERIMENT_SAMPLES),
        controls=1,
        notes=notes,
        runs=_runs_of_design(design),
    )


EXPERIMENT_CLAIMS = (
    _experiment_claim(
        "sam.torch.minor_mass_gradcam",
        "SAM puts more Grad-CAM mass on low-intensity pixels than GD (same training accuracy)",
        "§Empirical (Grad-CAM on CNNs, MNIST)",
        sp.Gt(m_sam - m_gd, 0, evaluate=False),
        "small CNN (width 4), MNIST-5k at 14x14, 16 paired seeds at the regime-2 alpha of "
        "sam.torch.cnn_collapse_boundary; area statistic over training-accuracy levels; Holm across the family"),
    _experiment_claim(
        "sam.torch.minor_mass_inputgrad",
        "SAM puts more |input gradient| mass on low-intensity pixels than GD (same training accuracy)",
        "§Empirical (saliency proxy)",
        sp.Gt(m_sam - m_gd, 0, evaluate=False),
        "same runs as sam.torch.minor_mass_gradcam; |dy/dx| instead of Grad-CAM"),
    _experiment_claim(
        "sam.torch.synthetic_minor_first",
        "on the bright/faint patch task SAM learns the faint (minor) patch before the bright (major) one",
        "§Empirical (controlled image test)",
        sp.Gt(sp.Symbol("t_major") - sp.Symbol("t_minor"), 0, evaluate=False),
        "patch images 8x8, small CNN, 16 seeds at the regime-2 alpha of sam.torch.patch_collapse_boundary; "
        "t = first step at which the accuracy from that patch alone (the other ablated) reaches 0.9",
        matched=False),
    _experiment_claim(
        "sam.torch.synthetic_minor_reliance",
        "on the bright/faint patch task SAM relies on the faint patch more than GD at the same accuracy",
        "§Empirical (controlled image test)",
        sp.Gt(m_sam - m_gd, 0, evaluate=False),
        "same runs; reliance = acc(major ablated) - acc(minor ablated), area over training-accuracy levels"),
    _experiment_claim(
        "sam.torch.synthetic_minor_gradcam",
        "on the bright/faint patch task SAM's Grad-CAM share on the faint patch exceeds GD's while learning",
        "§Empirical (controlled image test)",
        sp.Gt(m_sam - m_gd, 0, evaluate=False),
        "same runs; Grad-CAM minor/(minor+major) mass, area over training-accuracy levels"),
)

FAMILY_IDS = tuple(c.id for c in EXPERIMENT_CLAIMS)
CLAIMS = (DIAG_CLAIM, *EXPERIMENT_CLAIMS)


def _make_figures(outdir, tier):
    """The figures illustrate the claims, so they use the claims' experiment size (not the audit tier)."""
    from biasaudit.figures.sam_torch import make_gradcam_figures

    return make_gradcam_figures(outdir, sam_torch_tier(), data_dir=experiment_data_dir())


FIGURES = (
    FigureJob(
        id="sam.torch.gradcam",
        paper="sam",
        title="GD vs SAM on trained CNNs: Grad-CAM overlays, minor-mass curves, the patch task",
        claims=("sam.torch.minor_mass_*", "sam.torch.synthetic_*"),
        make=_make_figures,
        caption="At the regime-2 alpha of the cnn and patch designs: Grad-CAM overlays of GD and SAM on the same "
                "images at several training times (labelled by optimizer, step and training accuracy; one colour "
                "scale per image); mean and 95% seed band of the minor-feature metrics against step and against "
                "training accuracy (trained runs only; the legend counts the rest).",
        requires=("biasaudit.figures.sam_torch:make_gradcam_figures", "torch:Tensor"),
    ),
)
