"""biasaudit: symbolic-numeric audits of implicit-bias theorems.

The front door: the CLI (`biasaudit.cli`), the claim ledger (`biasaudit.ledger`), the claim registry
(`biasaudit.registry`) and the report writer. The mathematics lives in the sibling packages `theory`
(sympy statements), `numerics` (numba/mpmath checks) and `validation` (torch experiments).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
