"""Realtime: GraphQL subscriptions over graphql-transport-ws, fed by the table's change
stream (keygraph/streams). docs/realtime.md describes the protocol, fields and delivery."""
