"""Subscriptions' core, for any generated package: the one reader of a table's change stream
per process and the feeds it hands each change to by (tenant, topic) (hub.py, feed.py), a
subscriber's place in the stream across shards (frontier.py), and what a change is
(changes.py). What a change means to an API (its topics, its payload) is the API's."""
