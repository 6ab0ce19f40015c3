"""Domain writes for users, orders and groups: pure builders of the items and transaction
actions (also used by the seed), and the mutations that send them."""
