"""Test doubles for the tests and the benchmarks, kept out of the wheel: fresh stores of
either kind (stores.py) and a proxy injecting DynamoDB's faults (faults.py)."""
