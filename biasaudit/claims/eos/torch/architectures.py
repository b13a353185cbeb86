r"""Paper 2, E1 and E2 across architectures and losses: seed studies under the experiment contract
(:mod:`biasaudit.claims.eos.torch._study`), with their positive controls on the theory model.

Three statistics of a learning-rate sweep (gradient-flow proxy for s_GF and η_c = 2/s_GF, then full-batch GD at
η = m·η_c, m ∈ {0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2} at the quick tier; the FCN adds 0.5 and 3.5), one value
per init seed (:data:`biasaudit.validation.eos_config.E2_SEEDS`: 3 at the quick tier, 5 at the full tier):

==========================  ===========================================================  ======  =============
claims                      statistic (:mod:`biasaudit.validation.eos_stats`)            δ       decision
==========================  ===========================================================  ======  =============
``eos.torch.e2.<arch>``     k = η̂_kink/η_c − 1 (two-piece fit S = min(P, c/η))            0.05    |k| < δ
``eos.torch.e1.tracking.``  g = median over η ≥ 1.05 η_c of |1 − ηS/2|                   0.10    g < δ
``eos.torch.e1.plateau.``   p = max over η ≤ 0.95 η_c of |S η_c/2 − 1|                   0.10    p < δ
==========================  ===========================================================  ======  =============

each on the FCN (tanh and ReLU), the CNN, the ViT, the ResNet with BatchNorm, the same ResNet without it and the same
ResNet with its normalisation statistics held at their initial values, with
MSE and (``.ce``) cross-entropy; ``.diag`` is each statistic's positive control on the theory model. The
decision (:func:`biasaudit.validation.decision.equivalence_decision`): confirmed when the 90 % seed interval lies
inside ±δ, refuted when the 95 % interval lies wholly outside it, undecided otherwise.
"""

from __future__ import annotations

from biasaudit.claims.eos.torch._study import TOY, Family, study, study_claim
from biasaudit.claims.eos.torch.sweeps import KINK, TRACKING
from biasaudit.figures import FigureJob

__all__ = ["CLAIMS", "FIGURES", "ARCHITECTURES", "NAMES", "KINK_FAMILY", "TRACKING_FAMILY", "PLATEAU_FAMILY",
           "FAMILIES", "TRACKING_FAILS_FAMILY", "CE_SMALL_EPS", "study"]

ARCHITECTURES = {  # arch -> how the quick tier builds it (the record's notes)
    "fcn": "FCN 784-32-32-10 tanh, MNIST-5k n=500, eps=1e-2 with MSE (the E1 sweep)",
    "cnn": "CNN 3 conv layers (ReLU, width 8) + linear head, MNIST-5k n=100 at 7x7, eps=2e-2 with MSE",
    "resnet": "ResNet stem + 2 basic blocks (ReLU, full-batch BatchNorm, width 8), MNIST-5k n=300 at 7x7, "
              "eps=2e-2 with MSE",
    "vit": "ViT 1 block (dim 16, 2 heads, patches of 7), MNIST-5k n=100 at 14x14, eps=2e-2 with MSE",
    "fcn_relu": "FCN 784-32-32-10 ReLU (the E1 FCN with ReLU for tanh), MNIST-5k n=500, eps=1e-2 with MSE",
    "resnet_nobn": "the same ResNet without its BatchNorm layers (the init scale and the filters' scale are not "
                   "cancelled by a normalisation), MNIST-5k n=300 at 7x7, eps=2e-2 with MSE",
    "resnet_fixednorm": "the same ResNet with each BatchNorm's per-channel statistics computed once on the training "
                        "batch at the initialisation and then held (the gains and shifts train; no filter is "
                        "scale-invariant), MNIST-5k n=100 at 7x7, eps=2e-2 with MSE",
}
NAMES = {"fcn": "FCN", "cnn": "CNN", "resnet": "ResNet with BatchNorm", "vit": "ViT", "fcn_relu": "ReLU FCN",
         "resnet_nobn": "ResNet without BatchNorm", "resnet_fixednorm": "ResNet with its normalisation held fixed"}
_SOURCE = "paper 2, §Experiments (E1, E2: the transition at 2/s_GF across architectures and losses)"
_SEEN = ("fixed before seeds 1 and 2 of any architecture ran (seed 0's single-seed readings with MSE were seen: "
         "kink +2.4 % FCN, +0.2 % CNN, +4.3 % ViT, -0.7 % ReLU FCN, +14.1 % ResNet; EoS-side gap 0.014-0.086)")

KINK_FAMILY = Family(
    prefix="eos.torch.e2", statistic="biasaudit.validation.eos_stats:kink_offset", decision="equivalence",
    delta=KINK.value, reference="dense_kink", symbol="k", source=_SOURCE,
    delta_reason="the grid near eta_c is spaced 4 % (the two-piece fit resolves the breakpoint to about that), "
                 "plus the theory model's measured offset of the kink 0.5-2.2 % above 2/s_GF (eos.gd.kink_location); "
                 + _SEEN,
    title="on the {name}, the kink of final sharpness against eta lies at eta_c = 2/s_GF to within 5 %, over init "
          "seeds")
TRACKING_FAMILY = Family(
    prefix="eos.torch.e1.tracking", statistic="biasaudit.validation.eos_stats:eos_median_gap",
    decision="equivalence", delta=TRACKING.value, reference="same_grid", symbol="g", source=_SOURCE,
    delta_reason="'falls like 2/eta' read as within 10 %: the single-seed FCN measured a median gap of 0.015 and "
                 "the theory model 0.0075-0.028 above its kink (rare chaotic outliers reach 0.15); " + _SEEN,
    title="on the {name}, above eta_c the final sharpness follows 2/eta: the median over eta >= 1.05 eta_c of "
          "|1 - eta S/2| is below 0.10, over init seeds")
PLATEAU_FAMILY = Family(
    prefix="eos.torch.e1.plateau", statistic="biasaudit.validation.eos_stats:flow_plateau_dev",
    decision="equivalence", delta=TRACKING.value, reference="same_grid", symbol="p",
    source=_SOURCE,
    delta_reason="'roughly constant' read as within 10 %: below eta_c GD's sharpness lags the flow's by C eta "
                 "(S_GF - S_GD = O(eta) on the theory model), a few % at 0.93-0.97 eta_c; " + _SEEN,
    title="on the {name}, below eta_c the final sharpness stays at the flow's s_GF: the largest |S eta_c/2 - 1| over "
          "eta <= 0.95 eta_c is below 0.10, over init seeds")
FAMILIES = (KINK_FAMILY, TRACKING_FAMILY, PLATEAU_FAMILY)
# Cross-entropy's tracking holds only with eps near the flow's sharpness peak (0.25); below it, trained past the peak
# (eps = 0.05), the final sharpness falls away from 2/eta: the failing side of the tracking claim, as its own claim.
CE_SMALL_EPS = 0.05
TRACKING_FAILS_FAMILY = Family(
    prefix="eos.torch.e1.tracking_fails_small_eps", statistic=TRACKING_FAMILY.statistic, decision="positive",
    delta=0.05, offset=TRACKING.value, eps=CE_SMALL_EPS, control_prefix=TRACKING_FAMILY.prefix,
    reference="same_grid", symbol="g", source=_SOURCE + "; cross-entropy trained past the sharpness peak",
    delta_reason="the median gap must lie above the 10 % tracking band; a gap within 0.05 of the band's edge (half "
                 "the band) is no effect; the same FCN with cross-entropy at eps = 0.25 spread its gap over 0.03 "
                 "between 3 seeds (0.098-0.128), which the A/A control must allow; fixed after seed 0's single "
                 "reading at eps = 0.05 (gap 0.378, an earlier code state), before seeds 1 and 2 ran",
    title="on the {name}, trained past the flow's sharpness peak (eps = 0.05), above eta_c the final sharpness "
          "does not follow 2/eta: the median over eta >= 1.05 eta_c of |1 - eta S/2| lies above 0.10, over init "
          "seeds")

# The flow's eta_c moves with the stopping loss (the quick FCN: 20-50 % between eps and 2 eps, in every E2 record).
# If GD's kink moves with it, that spread is where the kink is, not an uncertainty of the prediction: the kink claim
# on sweeps stopped at 2 eps, each read at its own eta_c.
KINK_2EPS = 2e-2
KINK_AT_2EPS_FAMILY = Family(
    prefix="eos.torch.e2.at_2eps", statistic=KINK_FAMILY.statistic, decision="equivalence", delta=KINK_FAMILY.delta,
    eps=KINK_2EPS, control_prefix=KINK_FAMILY.prefix, reference="dense_kink", symbol="k",
    source=_SOURCE + "; the same sweeps stopped at twice the loss",
    delta_reason="the kink claim's own margin (the 4 % grid spacing plus the theory model's 0.5-2.2 % offset); "
                 "fixed before any sweep at 2 eps ran",
    title="on the {name}, stopped at twice E2's loss (eps = 0.02, where the flow's s_GF is lower and eta_c higher "
          "than at E2's eps), the kink of final sharpness lies at that sweep's own eta_c = 2/s_GF to within 5 %, "
          "over init seeds: eta_c's dependence on eps is where GD's kink is")
# Its failing side, seen on E2's seeds before it was written (kink +0.106, +0.094, +0.097 of the sweep's eta_c), and
# so decided on fresh seeds (E2's moved by 3: 3, 4, 5 at the quick tier), not on the ones that suggested it.
KINK_ABOVE_AT_2EPS_FAMILY = Family(
    prefix="eos.torch.e2.above_at_2eps", statistic=KINK_FAMILY.statistic, decision="positive", delta=KINK.value / 2,
    offset=KINK.value, eps=KINK_2EPS, seed_offset=3, control_prefix=KINK_FAMILY.prefix, reference="dense_kink",
    symbol="k", source=_SOURCE + "; the failing side of the kink at twice the loss, seen on E2's seeds and decided "
                                 "on fresh ones",
    delta_reason="the kink must lie above the 5 % band; within half the band of its edge is no effect (as for the "
                 "small-eps tracking claim); fixed after E2's seeds 0-2 had been read at 2 eps, before the fresh "
                 "seeds this claim reads ran",
    title="on the {name}, stopped at twice E2's loss (eps = 0.02), the kink of final sharpness lies more than 5 % "
          "above that sweep's own eta_c = 2/s_GF, over init seeds")

CLAIMS = tuple(
    claim for family in FAMILIES for claim in (
        study_claim(family, TOY),
        *(study_claim(family, arch, loss, name=NAMES[arch],
                      notes=ARCHITECTURES[arch] + ("; cross-entropy with eps = 0.25" if loss == "ce" else "")
                      + "; 3 init seeds at the quick tier, 5 at the full tier")
          for loss in ("mse", "ce") for arch in ARCHITECTURES))) + (
    study_claim(TRACKING_FAILS_FAMILY, "fcn", "ce", name=NAMES["fcn"],
                notes=ARCHITECTURES["fcn"] + f"; cross-entropy with eps = {CE_SMALL_EPS:g}; 3 init seeds at the quick "
                "tier, 5 at the full tier"),
    *(study_claim(family, "fcn", name=NAMES["fcn"],
                  notes=ARCHITECTURES["fcn"].replace("eps=1e-2", f"eps={KINK_2EPS:g}") + "; 3 init seeds at the "
                  "quick tier, 5 at the full tier") for family in (KINK_AT_2EPS_FAMILY, KINK_ABOVE_AT_2EPS_FAMILY)))


def _make_figure(outdir, tier):
    from pathlib import Path

    from biasaudit.figures.eos_torch import make_e2_figure

    return [Path(p) for p in make_e2_figure(outdir, tier)]


FIGURES = (FigureJob(
    id="eos.torch.e2_architectures", paper="eos",
    title="E2 across architectures: final sharpness against eta, in units of s_GF and eta_c",
    claims=("eos.torch.e2.*",), make=_make_figure,
    caption="Final S/s_GF against eta/eta_c for the FCN, CNN, ResNet and ViT of the tier, with the predicted "
            "plateau-then-2/eta curve min(1, eta_c/eta); a kink left of 1 means the transition comes early.",
    requires=("biasaudit.figures.eos_torch:make_e2_figure", "torch:Tensor")),)
