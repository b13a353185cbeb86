from biasaudit.cli import main

raise SystemExit(main())
