"""One module per CLI subcommand; see :mod:`biasaudit.cli`."""
