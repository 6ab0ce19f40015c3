"""Entry point of `python -m server`."""

import sys

from .cli import main

sys.exit(main())
