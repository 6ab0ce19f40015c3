"""keygraph's benchmark harness: a seeded dataset, the GraphQL queries of the benchmark, and
side-by-side measurements of keygraph against an in-memory floor and a naive (unbatched)
baseline, in-process and over HTTP, on the embedded store and on DynamoDB Local.

Run it with `python -m bench` (`--quick` for a smoke run); results go to
bench/results/latest.json and the table in bench/README.md.
"""
