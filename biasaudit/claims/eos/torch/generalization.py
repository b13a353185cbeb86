r"""Paper 2, E5: test error against the step size is often U-shaped, with the best η in the middle (not always:
the paper reports no U for CIFAR-10-5k with MSE). Seed studies under the experiment contract
(:mod:`biasaudit.claims.eos.torch._study`), read on E2's sweeps (no runs of their own).

The statistic is the two-lines test of a U (:func:`biasaudit.validation.eos_stats.u_arm_slopes`): with e the test
error relative to its mean over the sweep and u = ln η, the least-squares slopes b_L left of a break and b_R right
of it, U = min(−b_L, b_R) (share of the error per e-fold of η). The break is the interior grid point where the
*other* seeds' mean error is lowest (:func:`~biasaudit.validation.eos_stats.u_break_multiple`), so test noise that
places it cannot also make the arms. A quadratic in ln η is not used: fitted to a hockey stick (flat, then rising)
it can have its minimum inside the sweep (flat to 1.07 η_c, then up: at 0.86 η_c on the quick grid), and the flat
side of a sweep (η < η_c, where GD follows the flow) makes every sweep's left half flat.

=======================================  =====================================================  =====  ========
claims                                   statistic                                              δ      decision
=======================================  =====================================================  =====  ========
``eos.torch.e5.u_shape.<arch>``          U = min(−b_L, b_R) of the test error                   0.05   U > 0
``eos.torch.e5.u_shape.diag``            U of the theory model's test risk against a teacher    0.05   U > 0
=======================================  =====================================================  =====  ========

The positive control (``.diag``) is the theory model, where the risk of GD's endpoint against a teacher β* on the
EoS side (GD's own endpoint at 1.2 η_c, x' ~ N(0, I), 1000 test inputs per seed) is 0 at 1.2 η_c and grows
away from it: a U in η the theory guarantees (the endpoints move along the solution manifold as S = 2/η). With the
teacher at the flow's endpoint (0.5 η_c) the risk is flat, then rises: that control must not read as a U. Data
controls of every claim: A/A (seed s against s + 1) and ``flow_side`` (the error's slope below η_c, where GD
follows the flow and η cannot change what is learned: 0).

No claim states the other side ("no U", U < 0): U is the smaller of two noisy slopes, so on a flat curve with a
test set's binomial noise its mean is about −0.13 (a simulation at n = 1000, e = 0.15, on the quick grid), and
"U < 0" would be confirmed where no arm moves. Where the U claim is refuted, it is refuted by equivalence (|U|
within δ: no U that matters) or by the whole interval lying below 0.

Each init seed draws its own training and test subsets (MNIST-5k shuffled with the seed), so the seed-level
interval of U carries the init's, the training data's and the test examples' variance together: it is an interval
over seeds and test sets, not over one fixed test set.
"""

from __future__ import annotations

from biasaudit.claims.eos.torch._study import TOY, Family, study_claim
from biasaudit.claims.eos.torch.architectures import ARCHITECTURES, NAMES
from biasaudit.figures import FigureJob

__all__ = ["CLAIMS", "FIGURES", "U_FAMILY"]

U_FAMILY = Family(
    prefix="eos.torch.e5.u_shape", statistic="biasaudit.validation.eos_stats:u_arm_slopes", decision="positive",
    delta=0.05, reference="teacher", symbol="U", null="flow_side",
    cross_fit="biasaudit.validation.eos_stats:u_break_multiple",
    source="paper 2, §Experiments (E5: test error against eta is often U-shaped)",
    delta_reason="an arm that moves the test error by less than 5 % of its level per e-fold of eta is below what a "
                 "quick-tier test set resolves: one run's error at n = 1000 and e = 0.15 has a binomial standard "
                 "error of 7.5 % of e; fixed before the statistic was computed on any sweep (the networks' test "
                 "errors per eta had been seen as E2's stored results: equal below eta_c, within about 0.02 above)",
    title="on the {name}, test error against eta is U-shaped with its best eta inside the sweep (0.75-2 eta_c; the "
          "FCNs 0.5-3.5): it falls into the break and rises after it, U = min(-b_L, b_R) > 0, over init seeds")


def _notes(arch: str, loss: str) -> str:
    return (ARCHITECTURES[arch] + ("; cross-entropy with eps = 0.25" if loss == "ce" else "")
            + "; read on the E2 sweeps' test errors (1000 test images); 3 init seeds at the quick tier, 5 at the "
              "full tier")


CLAIMS = (study_claim(U_FAMILY, TOY),) + tuple(
    study_claim(U_FAMILY, arch, loss, name=NAMES[arch], notes=_notes(arch, loss))
    for loss in ("mse", "ce") for arch in ARCHITECTURES)


def _make_figure(outdir, tier):
    from pathlib import Path

    from biasaudit.claims.eos.torch._study import TEACHER_FLOW, TEACHER_U, _configs, seed_sweeps, teacher_sweep
    from biasaudit.figures.eos_torch import make_e5_figure
    from biasaudit.validation.eos_config import E2_FULL_ONLY

    archs = [a for a in ARCHITECTURES if not (tier == "quick" and a in E2_FULL_ONLY)]
    toy = list(zip(seed_sweeps(TOY, "mse", tier), _configs(TOY, "mse", tier)))
    panels = {
        "the theory model: risk against a teacher": {
            f"teacher at {TEACHER_U:g} eta_c (a U)": [teacher_sweep(sw, c, TEACHER_U) for sw, c in toy],
            f"teacher at {TEACHER_FLOW:g} eta_c (no U)": [teacher_sweep(sw, c, TEACHER_FLOW) for sw, c in toy]},
        **{f"networks, {name}": {NAMES[a]: seed_sweeps(a, loss, tier) for a in archs}
           for loss, name in (("mse", "MSE"), ("ce", "cross-entropy"))}}
    return [Path(p) for p in make_e5_figure(outdir, panels)]


FIGURES = (FigureJob(
    id="eos.torch.e5_test_error", paper="eos",
    title="E5: test error against eta, per seed and architecture, beside the theory model's guaranteed U",
    claims=("eos.torch.e5.*",), make=_make_figure,
    caption="Test error divided by its mean over each sweep, against eta/eta_c (thin: one init seed; thick: their "
            "mean). Left, the positive control: the theory model's risk against a teacher at GD's endpoint at 1.2 "
            "eta_c falls into it and rises after it; against the flow's endpoint it is flat, then rises (no U). "
            "Middle and right: the networks of the tier with MSE and cross-entropy.",
    requires=("biasaudit.figures.eos_torch:make_e5_figure", "torch:Tensor")),)
