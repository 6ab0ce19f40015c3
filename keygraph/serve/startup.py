"""An execution environment's init phase (a Lambda's): what it builds once and keeps."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def building() -> Iterator[None]:
    """No cyclic collection while the init imports and builds what it keeps (it would rescan
    all of it, for nothing to free); what was built is then frozen out of later ones."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
