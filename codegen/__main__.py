"""`python -m codegen`: see codegen.cli."""

import sys

from .cli import main

sys.exit(main())
