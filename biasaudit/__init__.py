"""biasaudit: symbolic-numeric audits of implicit-bias theorems.

One import root, in layers that import downwards only (``notes/conventions.md``):

* ``biasaudit.plumbing``: input checks, atomic writes, the cache root, JSON conversion;
* ``biasaudit.theory``: sympy statements of the theorems, lambdified once (folder ``theory/``);
* ``biasaudit.numerics``: numba/mpmath integrators and iterations (folder ``numerics/``);
* ``biasaudit.validation``: torch experiments on networks (folder ``validation/``);
* the front door on top: the CLI (``biasaudit.cli``), the claim ledger (``biasaudit.ledger``), the claim
  registry (``biasaudit.registry``), the audit and the report writer (``biasaudit.audit``).

Importing ``biasaudit`` itself loads none of them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
