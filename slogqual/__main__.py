from slogqual.cli import main

raise SystemExit(main())
