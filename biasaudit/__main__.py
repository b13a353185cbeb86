"""``python -m biasaudit``: the ``biasaudit`` command line (:func:`biasaudit.cli.main`)."""

from biasaudit.cli import main

raise SystemExit(main())
