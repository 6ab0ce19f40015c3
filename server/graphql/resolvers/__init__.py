"""Root query and mutation fields, one module per domain."""
