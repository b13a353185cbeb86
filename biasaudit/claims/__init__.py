"""Claim definitions, one module per paper area; each defines ``CLAIMS``. See :mod:`biasaudit.registry`."""

__all__ = []
