"""``eos.s_gf.*``: the sharpness s_GF that gradient flow reaches: small init (``small_init.py``: the closed
form and its rate in alpha) and large init (``large_init.py``: where eta_c = 2/s_GF stops describing GD)."""

from biasaudit.claims.eos.s_gf import large_init, small_init

__all__ = ["CLAIMS"]

CLAIMS = small_init.CLAIMS + large_init.CLAIMS
