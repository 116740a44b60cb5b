from neurips25.cli import main

raise SystemExit(main())
