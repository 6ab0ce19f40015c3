"""The secret a served API's tokens are signed with, from KEYGRAPH_JWT_SECRET (at least 32
characters, as the server asks); it keys the cursors' signatures too."""

from __future__ import annotations

import os

SECRET_ENV = "KEYGRAPH_JWT_SECRET"
MIN_SECRET = 32


def secret() -> str:
    """The secret; ValueError, saying what to set, when it is missing or too short."""
    value = os.environ.get(SECRET_ENV, "")
    if len(value) < MIN_SECRET:
        raise ValueError(f"set {SECRET_ENV} to a secret of at least {MIN_SECRET} characters")
    return value
