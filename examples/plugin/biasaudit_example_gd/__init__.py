"""An example of a claim package for biasaudit (see ``claims.py`` and the entry point in pyproject.toml)."""
