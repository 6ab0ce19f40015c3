"""Tokens: the key the app checks bearer tokens with, from the settings, and dev tokens."""
