"""The peer: the benchmark's Q1-Q3 served the way a team would write them with Strawberry and
PynamoDB, DataLoaders batching the reads, over the same DynamoDB table and items as keygraph.
`python -m bench peer` measures both side by side over HTTP."""
