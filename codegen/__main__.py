"""`python -m codegen`: the `keygraph` command (codegen.cli)."""

import sys

from .cli import main

sys.exit(main())
