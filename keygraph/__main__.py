"""`python -m keygraph table ...`: the runtime's table command (keygraph.cli); the whole
`keygraph` command is `python -m codegen`."""

import sys

from keygraph.cli import main

sys.exit(main())
