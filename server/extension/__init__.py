"""What this repository's API says beyond its spec, as an extension of the API the spec
compiles to (generated/api.py): the reads a spec cannot say (reads.py), schema.graphql's
mutations, each a domain write with what it keeps (users.py, orders.py, places.py), and its
subscriptions, each following the spec's (subscriptions.py).
`keygraph serve --package generated --extend server.extension` serves them with the
spec's fields."""

from keygraph.api import combined

from . import orders, places, reads, subscriptions, users, writing

EXTENSION = combined(
    reads.EXTENSION,
    writing.EXTENSION,
    users.EXTENSION,
    orders.EXTENSION,
    places.EXTENSION,
    subscriptions.EXTENSION,
)

__all__ = ["EXTENSION"]
