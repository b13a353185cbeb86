import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# Numba's first call compiles: no deadlines. `ci` is the default; `thorough` for long local runs.
settings.register_profile(
    "ci", max_examples=15, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _no_flush_denormal_leak():
    """torch.set_flush_denormal is process-global; a leak makes hypothesis raise FloatingPointError."""
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_flush_denormal(False)
