"""`python -m keygraph`: the `keygraph` command (keygraph.cli)."""

import sys

from keygraph.cli import main

sys.exit(main())
