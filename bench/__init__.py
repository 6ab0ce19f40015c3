"""keygraph's benchmarks: `python -m bench <name>` runs one experiment (bench/harness.py
lists them), and bench/README.md records what each measured. The headline, `python -m bench
queries`, measures the benchmark's GraphQL queries on the compiled API side by side against
the same API on graphql-core's executor and an in-memory floor, in process and over HTTP,
on the embedded store and on DynamoDB Local.
"""
