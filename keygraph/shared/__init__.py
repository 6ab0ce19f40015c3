"""What every host of a deployment shares through Redis (or Valkey), when one is configured:
the tenants' budgets (bucket.py) and their places (places.py), over one link that falls back
to the host's own counts while Redis cannot be reached (link.py)."""
