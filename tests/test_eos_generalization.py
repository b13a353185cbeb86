"""E5 (biasaudit.claims.eos.torch.generalization): the two-lines U statistic, its cross-fitted break, the claims on
synthetic sweeps (each side of the decision, a failing positive control), and the positive control on the real
theory model."""

from __future__ import annotations

import math

import numpy as np
import pytest

import biasaudit.claims.eos.torch.generalization as e5
from biasaudit.ledger import Verdict, run_claim
from biasaudit.validation import eos_stats

MULTS = (0.75, 0.93, 0.97, 1.03, 1.07, 1.25, 2.0)


def error_sweep(errors, mults=MULTS, s_gf=8.0):
    """A sweep whose run at m·η_c ends with test error ``errors[i]`` (the rest of its final measures ideal)."""
    eta_c = 2 / s_gf
    runs = [{"eta": m * eta_c, "multiple": m, "outcome": "converged", "steps": 100,
             "final": {"S": {"value": min(s_gf, 2 / (m * eta_c)), "converged": True}, "test_error": e,
                       "n_test": 1000}} for m, e in zip(mults, errors)]
    gf = {"s_gf": s_gf, "eta_c": eta_c, "eps": 2e-2, "reached_eps": True, "all_converged": True, "path": [],
          "steps": 100}
    return {"config": {}, "gf": gf, "runs": runs, "dir": ""}


def u_errors(depth=0.3, best=1.25, jitter=0.0):
    """Flat below η_c, then a U in ln η with its minimum at ``best`` η_c, ``depth`` its relative dip."""
    u = np.log(np.array(MULTS))
    dip = depth * np.exp(-((u - math.log(best)) / 0.25) ** 2)
    return list(0.2 * (1 - np.where(np.array(MULTS) < 1, dip[0], dip)) + jitter)


FALLING = [0.2, 0.2, 0.2, 0.19, 0.18, 0.16, 0.12]  # flat on the flow side, then falling: no U
HOCKEY = [0.2, 0.2, 0.2, 0.2, 0.2, 0.22, 0.3]  # flat, then rising: no U, though a quadratic dips inside
BUMP = [0.2, 0.2, 0.2, 0.22, 0.24, 0.26, 0.2]


# ----------------------------------------------------------------------------- the statistic

def test_the_two_lines_statistic_sees_a_u_and_nothing_else():
    eta_c = 0.25
    assert eos_stats.u_arm_slopes(error_sweep(u_errors()), eta_c, 1.25) > 0.2
    assert eos_stats.u_arm_slopes(error_sweep(FALLING), eta_c, 1.07) < -0.05
    assert eos_stats.u_arm_slopes(error_sweep(BUMP), eta_c, 1.25) < -0.05
    hockey = eos_stats.u_arm_slopes(error_sweep(HOCKEY), eta_c, 1.03)
    assert abs(hockey) < 1e-9  # a flat left arm: no U
    u = np.log(np.array(MULTS))
    quadratic = np.polyfit(u, HOCKEY, 2)
    assert quadratic[0] > 0 and u[0] < -quadratic[1] / (2 * quadratic[0]) < u[-1]  # the trap the statistic avoids


def test_pure_noise_does_not_read_as_a_u():
    """A flat truth with a test set's binomial noise (n = 1000, e = 0.15), 3 seeds: the cross-fitted statistic's
    mean is below 0 and the claim's decision almost never confirms a U (about 1 % in a 4000-draw simulation)."""
    from biasaudit.validation.decision import three_way

    rng = np.random.default_rng(0)
    confirmed, values = 0, []
    for _ in range(300):
        sweeps = [error_sweep(list(rng.binomial(1000, 0.15, len(MULTS)) / 1000)) for _ in range(3)]
        u = e5.U_FAMILY.readings(sweeps, [0.25] * 3)
        values += u
        confirmed += three_way(u, direction=1, delta=e5.U_FAMILY.delta).verdict == "confirmed"
    assert confirmed / 300 < 0.03 and np.mean(values) < 0


def test_runs_cut_at_max_steps_do_not_enter_the_curve():
    sw = error_sweep(FALLING)
    sw["runs"][-1]["outcome"] = "max_steps"
    m, _ = eos_stats.relative_test_errors(sw, 0.25)
    assert m.tolist() == list(MULTS[:-1])


def test_an_arm_of_one_run_is_undecided_and_the_break_is_interior():
    assert math.isnan(eos_stats.u_arm_slopes(error_sweep(FALLING), 0.25, 2.0))
    assert math.isnan(eos_stats.u_arm_slopes(error_sweep(FALLING), math.nan, 1.07))
    # the lowest error is at the last run, but the break must leave each arm two runs
    assert eos_stats.u_break_multiple([error_sweep(FALLING)] * 2, [0.25, 0.25]) == 1.25
    assert eos_stats.u_break_multiple([error_sweep(u_errors(best=1.07))], [0.25]) == 1.07


def test_the_flow_side_slope_reads_only_the_runs_below_eta_c():
    assert abs(eos_stats.flow_side_error_slope(error_sweep(FALLING), 0.25)) < 1e-12
    tilted = [0.24, 0.22, 0.2] + FALLING[3:]
    assert eos_stats.flow_side_error_slope(error_sweep(tilted), 0.25) < -0.3


# ----------------------------------------------------------------------------- the claims


def _cycle(seq, n):
    """The first n of ``seq`` repeated (a box's per-seed list for a study that asks for more seeds), or None."""
    return [seq[i % len(seq)] for i in range(n)] if seq else None


@pytest.fixture
def fake_sweeps(monkeypatch):
    """Every seed's sweep from ``box`` (arch -> per-seed sweeps; default: U-shaped, seeds differing a little); the
    theory model's teacher sweeps from ``box["teacher"]`` and ``box["flow_teacher"]``."""
    from biasaudit.claims.eos.torch import _study

    box = {}

    def sweeps(arch, loss, tier, eps=None, seed_offset=0, n_seeds=None):
        n = n_seeds or len(_study._configs(arch, loss, tier))
        return _cycle(box.get(arch), n) or [error_sweep(u_errors(jitter=0.001 * i)) for i in range(n)]

    def teacher(sweep, config, multiple):
        key = "teacher" if multiple == _study.TEACHER_U else "flow_teacher"
        return box.get(key) or error_sweep(u_errors(depth=0.9) if key == "teacher" else HOCKEY)

    monkeypatch.setattr(_study, "seed_sweeps", sweeps)
    monkeypatch.setattr(_study, "teacher_sweep", teacher)
    _study.study.cache_clear()
    yield box
    _study.study.cache_clear()


def _claim(cid):
    return next(c for c in e5.CLAIMS if c.id == cid)


def test_every_architecture_and_both_losses_with_the_teacher_as_positive_control():
    ids = {c.id for c in e5.CLAIMS}
    assert "eos.torch.e5.u_shape.diag" in ids and "eos.torch.e5_u_shape" not in ids
    assert not any(".no_u." in i for i in ids)  # U is biased low on noise: "no U" is not a claim
    for arch in ("fcn", "fcn_relu", "cnn", "resnet", "vit", "resnet_nobn", "resnet_fixednorm"):
        assert {f"eos.torch.e5.u_shape.{arch}", f"eos.torch.e5.u_shape.{arch}.ce"} <= ids
    pc = _claim("eos.torch.e5.u_shape.diag").contract
    assert pc.role == "positive_control" and {c.name for c in pc.data_controls} == {"hockey_stick"}
    assert {c.name for c in _claim("eos.torch.e5.u_shape.cnn").contract.data_controls} == {"flow_side"}


@pytest.mark.parametrize("claim", [c for c in e5.CLAIMS if "resnet_nobn" not in c.id], ids=lambda c: c.id)
def test_every_claim_confirms_u_shaped_sweeps_with_its_contract_fields(fake_sweeps, claim):
    from biasaudit.contract import REQUIRED_FIELDS

    ev = run_claim(claim)
    assert ev.verdict is Verdict.CONFIRMED, ev.detail
    assert set(REQUIRED_FIELDS) <= set(ev.observed) and ev.observed["n_seeds"] >= 3


def test_falling_and_flat_errors_refute_the_u(fake_sweeps):
    fake_sweeps["fcn"] = [error_sweep([e + 0.001 * i for e in FALLING]) for i in range(3)]
    assert run_claim(_claim("eos.torch.e5.u_shape.fcn")).verdict is Verdict.REFUTED
    fake_sweeps["vit"] = [error_sweep([0.3 + 0.001 * ((i + k) % 2) for k in range(len(MULTS))]) for i in range(3)]
    ev = run_claim(_claim("eos.torch.e5.u_shape.vit"))
    assert ev.verdict is Verdict.REFUTED and "equivalen" in ev.observed["decision"]["rule"]


def test_errors_that_move_below_eta_c_fail_the_flow_side_control(fake_sweeps):
    tilted = [0.26, 0.22, 0.2]  # eta changes what is learned where GD follows the flow
    fake_sweeps["cnn"] = [error_sweep(tilted + u_errors(jitter=0.001 * i)[3:]) for i in range(3)]
    ev = run_claim(_claim("eos.torch.e5.u_shape.cnn"))
    assert ev.verdict is Verdict.UNDECIDED and "flow_side" in ev.detail


def test_a_positive_control_that_cannot_see_the_u_leaves_the_claims_undecided(fake_sweeps):
    fake_sweeps["teacher"] = error_sweep(HOCKEY)  # the statistic misses the guaranteed U
    assert run_claim(_claim("eos.torch.e5.u_shape.diag")).verdict is Verdict.REFUTED
    ev = run_claim(_claim("eos.torch.e5.u_shape.fcn"))
    assert ev.verdict is Verdict.UNDECIDED and "positive control" in ev.detail
    from biasaudit.claims.eos.torch._study import study

    fake_sweeps.pop("teacher")
    study.cache_clear()
    fake_sweeps["flow_teacher"] = error_sweep(u_errors(depth=0.5))  # a control that sees a U where none is
    assert run_claim(_claim("eos.torch.e5.u_shape.diag")).verdict is Verdict.UNDECIDED


# ----------------------------------------------------------------------------- the real positive control

def test_the_theory_model_shows_the_guaranteed_u_and_no_u_at_the_flow_teacher(tmp_path, monkeypatch):
    """The positive control on the real theory model (8 seeds, ~3 s each the first time): the risk against a teacher
    at 1.2 eta_c reads as a U on every seed; against the flow's endpoint, the same decision refutes a U."""
    from biasaudit.claims.eos.torch._study import study
    from biasaudit.validation.decision import three_way

    monkeypatch.setenv("BIASAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    res = study.__wrapped__(e5.U_FAMILY, "toy", "mse", "quick")
    assert res["decision"].verdict == "confirmed" and min(res["values"]) > e5.U_FAMILY.delta, res["values"]
    assert all(c.equivalent for c in res["controls"]), [c.summary() for c in res["controls"]]
    assert three_way(res["null_values"], direction=1, delta=e5.U_FAMILY.delta).verdict == "refuted"


def test_the_e5_figure_draws_every_panel(tmp_path):
    from biasaudit.figures.eos_torch import make_e5_figure

    panels = {"theory": {"U": [error_sweep(u_errors(depth=0.9))], "no U": [error_sweep(HOCKEY)]},
              "networks": {"FCN": [error_sweep(FALLING), error_sweep([e + 0.01 for e in FALLING])]}}
    (path,) = make_e5_figure(tmp_path, panels)
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
