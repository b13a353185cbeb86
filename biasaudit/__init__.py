"""biasaudit: symbolic-numeric audits of implicit-bias theorems.

One import root, in layers that import downwards only (``notes/conventions.md``):

* ``biasaudit.plumbing``: input checks, atomic writes, the cache root, JSON conversion;
* ``biasaudit.theory``: sympy statements of the theorems, lambdified once (folder ``theory/``);
* ``biasaudit.numerics``: numba/mpmath integrators and iterations (folder ``numerics/``);
* ``biasaudit.validation``: torch experiments on networks (folder ``validation/``);
* the front door on top: the CLI (``biasaudit.cli``), the claim ledger (``biasaudit.ledger``), the claim
  registry (``biasaudit.registry``), the audit and the report writer (``biasaudit.audit``).

Importing ``biasaudit`` itself loads none of them. The Python API (:mod:`biasaudit.api`) is re-exported
here, loaded on first use: ``biasaudit.sam_regimes(mu=(1, 2), rho=1.0)``.
"""

__version__ = "0.1.0"

_API = ("SamRegimes", "LinfLimit", "ClaimInfo", "AuditSummary", "sam_regimes", "linf_limit", "eos_regimes",
        "eos_sweep", "central_flow", "list_claims", "check_claim", "run_audit")  # biasaudit.audit is the audit package
__all__ = ["__version__", *_API]


def __getattr__(name):  # PEP 562: the API without importing numpy/sympy at `import biasaudit`
    if name in _API:
        from biasaudit import api

        return getattr(api, name)
    raise AttributeError(f"module 'biasaudit' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
