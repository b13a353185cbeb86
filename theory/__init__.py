"""Sympy statements of the theorems (limit directions, regime thresholds, solution manifolds, minimizers),
each lambdified once. Imports only :mod:`biasaudit.plumbing` and itself."""
