"""The claims, one folder per claim-id prefix: ``sam.l2.alpha_collapse`` lives in ``claims/sam/l2/``.

Each paper package lists its folders in reading order (``FOLDERS``); each folder defines ``CLAIMS`` (and may
define ``FIGURES``). :mod:`biasaudit.registry` reads them.
"""

__all__ = ["PAPERS"]

PAPERS = ("sam", "eos")  # the paper packages, in the order the report reads them
