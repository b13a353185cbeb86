"""The library's defaults are the papers' (loss factor c = 1/2, joint normalisation). The claims pass every
parameter explicitly, so only the callers that omit one (the CLI, the API) and these tests see a default."""

import numpy as np
import pytest

from biasaudit.theory.eos_flow import s_gf
from biasaudit.theory.eos_minimizers import stable_eta_max
from biasaudit.theory.eos_model import eos_problem
from biasaudit.theory.sam_fields import reduced_field

TOY = {"x": (1.0, 2.0), "y": 1.0, "w0": (0.1, 0.1)}  # paper 2's toy: s_GF = 7.727, stable minima up to eta = 1/2


def test_the_eos_problem_defaults_to_the_loss_factor_one_half_of_the_toy():
    p = eos_problem(TOY["x"], TOY["y"], TOY["w0"])
    assert p.c == 0.5 and s_gf(p) == pytest.approx(7.727, abs=5e-4)


def test_the_stable_minima_threshold_defaults_to_the_loss_factor_one_half():
    assert stable_eta_max(np.array(TOY["x"]), TOY["y"]) == pytest.approx(0.5)  # 1/(4 c y x_min) at c = 1/2


def test_the_reduced_l2_field_defaults_to_the_joint_normalisation():
    default, joint, layer = (reduced_field("l2", 3), reduced_field("l2", 3, "joint"), reduced_field("l2", 3, "layer"))
    w, mu = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    assert default.normalization == "joint"
    assert np.array_equal(default.numpy(w, mu, 0.2), joint.numpy(w, mu, 0.2))
    assert not np.allclose(default.numpy(w, mu, 0.2), layer.numpy(w, mu, 0.2))
