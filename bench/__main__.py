"""`python -m bench <name> [options]` (bench/harness.py)."""

import sys

from bench.harness import main

sys.exit(main())
