"""Entry point of `python -m server`."""

import sys

from server.cli import main

sys.exit(main())
