"""Persisted operations: documents known by their sha256, registered by clients (automatic
persisted queries) or pinned by a manifest (trusted documents)."""
