r"""Paper 2, E4 (dynamics in time) as seed studies under the experiment contract
(:mod:`biasaudit.claims.eos.torch._study`): in one run above η_c the sharpness stays at 2/η over time while the
two-step averaged norm grows; read on E2's sweeps (each FCN seed's run at 2 η_c has its sharpness measured at 4
consecutive steps of every 25), with positive controls on the theory model (its run at 1.4 η_c, 4 steps of every 5;
GD on it diverges at 2 η_c).

=================================  ==============================================================  ======  =========
claims                             statistic (:mod:`biasaudit.validation.eos_stats`)                δ       decision
=================================  ==============================================================  ======  =========
``eos.torch.e4.tracking.<arch>``   t = median over the EoS phase of ``|η S_t/2 − 1|``               0.10    t < δ
``eos.torch.e4.norm.<arch>``       n = growth of (‖θ_k‖₁ + ‖θ_k+1‖₁)/2 over the EoS phase, minus    0.01    n > 0
                                   its growth on the flow side's run from the same loss on
``eos.torch.e4.crosses.<arch>``    b = the smaller share of the EoS phase with η S_t/2 above / below 1   0.05    b > 0.1
``eos.torch.e4.period2.<arch>``    a = share of the EoS phase's 4-step bursts in which S_t zigzags     0.10    a > 5/12
=================================  ==============================================================  ======  =========

The EoS phase runs from the first measurement with η S_t/2 ≥ 0.95 to the end of the run (L < eps). The norm's
growth is decided on its contrast with the flow side (:func:`biasaudit.validation.eos_stats.side_contrast`): the
same two-step averaged growth on the sweep's flow-side run nearest η_c (0.93 η_c), where GD follows the gradient
flow and no edge of stability can make the norm grow, from the first step at which its training loss is at or below
the tracked run's at the edge's start, to its end. The norm grows while GD fits the data, edge or no edge; that
growth cancels. On the FCN
(tanh and ReLU) with MSE: the architectures whose E2 sweeps have a tracked run. "Oscillates around 2/η" is read as
"spends time on both sides of it" (``crosses``), counted from the first measurement at or above 2/η (the approach
from below is not a crossing): a monotone approach or a plateau above 2/η fails it, but measured
every 25 steps a path that is noisy about 2/η passes it too. So the tracked runs measure S in bursts of 4
consecutive steps every 25 (every 5 on the theory model), and ``period2`` asks whether S_t alternates from one step
to the next (GD's period-2 oscillation across the valley moves S with it): a zigzag in a burst has probability 5/12
for noise without memory, 0 for a monotone path, 1 for a period-2 one.
"""

from __future__ import annotations

from biasaudit.claims.eos.torch._study import TOY, Family, study_claim
from biasaudit.claims.eos.torch.architectures import ARCHITECTURES, NAMES
from biasaudit.claims.eos.torch.sweeps import TRACKING
from biasaudit.validation.eos_stats import ZIGZAG_NOISE_SHARE

__all__ = ["CLAIMS", "FAMILIES", "TIME_TRACKING_FAMILY", "TIME_NORM_FAMILY", "CROSSING_FAMILY", "PERIOD2_FAMILY",
           "E4_ARCHITECTURES"]

_SOURCE = "paper 2, §Experiments (E4: dynamics in time)"
E4_ARCHITECTURES = ("fcn", "fcn_relu")  # E2's sweeps with a tracked run (eos_config: track_every > 0)

TIME_TRACKING_FAMILY = Family(
    prefix="eos.torch.e4.tracking", statistic="biasaudit.validation.eos_stats:eos_time_gap", decision="equivalence",
    delta=TRACKING.value, reference="same_grid", symbol="t", source=_SOURCE,
    delta_reason="the same 10 % band as E1's tracking across eta (eos_tracking); the single-seed FCN's run at 2 eta_c "
                 "(an earlier code state) sat at eta S_t/2 = 1.03-1.10 over its EoS phase, seen before this margin "
                 "was fixed; seeds 1 and 2 were not read",
    title="on the {name}, in the run at 2 eta_c the sharpness stays at 2/eta over time: the median over the edge "
          "phase of |eta S_t/2 - 1| is below 0.10, over init seeds")
TIME_NORM_FAMILY = Family(
    prefix="eos.torch.e4.norm", statistic="biasaudit.validation.eos_stats:eos_norm_time_growth",
    decision="positive", delta=0.01, reference="same_grid_sweep_eta_c", symbol="n", source=_SOURCE,
    contrast=True,
    arms=("the growth over the EoS phase of the run at 2 eta_c",
          "the same growth on the flow side's run nearest eta_c (eta <= 0.95 eta_c) from the same training loss on"),
    delta_reason="a two-step averaged l1 norm that grows by less than 1 % over the whole edge phase is flat; the "
                 "single-seed FCN's run at 2 eta_c (an earlier code state) grew 13-17 % over it, seen before this "
                 "margin was fixed; seeds 1 and 2 were not read; the margin was fixed for the EoS phase's growth "
                 "and is kept for its contrast with the flow side. The contrast's flow arm was designed after a first "
                 "version (matched on the share of steps) had been read on the networks (fcn +0.024 confirmed, "
                 "fcn_relu +0.008 refuted as trivial); the loss match was fixed from the theory model, where the "
                 "share match read the early fit. A confirmation says the contrast is above 0, not above delta",
    title="on the {name}, in the run at 2 eta_c the two-step averaged l1 norm grows over the edge phase more than "
          "it grows on the flow side from the same training loss on, over init seeds")
CROSSING_FAMILY = Family(
    prefix="eos.torch.e4.crosses", statistic="biasaudit.validation.eos_stats:eos_side_balance", decision="positive",
    delta=0.05, offset=0.10, reference="same_grid", symbol="b", source=_SOURCE,
    delta_reason="b is at least 0 by construction, so the claim reads b - 0.1: a path that spends less than a tenth "
                 "of its measured edge phase on one side of 2/eta does not oscillate around it, and a share within "
                 "5 points of that edge is equivalent to it; fixed after the FCN runs' paths had been read (share "
                 "above 2/eta 0.69-0.97 per run), so these numbers are not blind",
    title="on the {name}, in the run at 2 eta_c the sharpness oscillates around 2/eta: over the edge phase it "
          "spends more than a tenth of its measurements on each side of 2/eta, over init seeds")
PERIOD2_FAMILY = Family(
    prefix="eos.torch.e4.period2", statistic="biasaudit.validation.eos_stats:eos_period2_share", decision="positive",
    delta=0.10, offset=ZIGZAG_NOISE_SHARE, reference="same_grid", symbol="a", source=_SOURCE,
    delta_reason="a is 5/12 for noise without memory (10 of the 24 orders of 4 values zigzag), so the claim reads "
                 "a - 5/12, and a share within 10 points of noise's is no alternation (with about 30 bursts per "
                 "run, noise's share has a binomial sd of 0.09 per seed); fixed after one pilot of seed 0's FCN run "
                 "at 2 eta_c (22 of its 32 bursts zigzagged, 0.69, with eigsh at tol 1e-6), before any tracked run "
                 "of the audit measured bursts",
    title="on the {name}, in the run at 2 eta_c the sharpness alternates from one step to the next (period 2) at "
          "the edge: more of its 4-step bursts zigzag than the 5/12 of noise, over init seeds")
FAMILIES = (TIME_TRACKING_FAMILY, TIME_NORM_FAMILY, CROSSING_FAMILY, PERIOD2_FAMILY)

CLAIMS = tuple(
    claim for family in FAMILIES for claim in (
        study_claim(family, TOY),
        *(study_claim(family, arch, "mse", name=NAMES[arch],
                      notes=ARCHITECTURES[arch] + "; the run at 2 eta_c of each E2 seed, sharpness at 4 consecutive steps of every 25; "
                      "3 init seeds at the quick tier, 5 at the full tier")
          for arch in E4_ARCHITECTURES)))
