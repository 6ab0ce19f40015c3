"""Fuzzers of the API: hostile values, documents and bodies, and racing mutations."""
