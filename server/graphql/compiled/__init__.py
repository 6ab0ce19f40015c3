"""Compiled execution: each operation compiled once into a plan over the schema's own
resolvers, then run in waves of batched loads, without graphql-core's per-field machinery.
Operations the compiler does not cover (introspection, subscriptions) run on Strawberry."""
