"""torch experiments that confirm the predictions on trained networks (GPU when there is one, else CPU).
Imports :mod:`biasaudit.plumbing`, :mod:`biasaudit.theory`, :mod:`biasaudit.numerics` and itself only."""
