"""keygraph server: the GraphQL API over the generated data layer."""
