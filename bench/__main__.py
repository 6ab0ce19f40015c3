"""`python -m bench [--quick] [--store embedded|dynamodb-local|both] [--out PATH]`."""

from bench.run import main

main()
