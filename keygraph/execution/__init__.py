"""Compiled execution for any graphql-core schema: each operation compiled once into a plan
over the schema's own resolvers, then run in waves of batched loads, without graphql-core's
per-field machinery. What the compiler does not cover (introspection, @defer, middleware)
runs on graphql-core's executor, which answers the same."""
