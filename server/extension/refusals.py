"""The domain's refusals (server/errors.py), and its models' refusals of a client's values,
as the runtime's, so that each field of the extension answers the domain's code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pydantic

from keygraph import errors
from server import errors as domain


@contextmanager
def as_api_errors() -> Iterator[None]:
    """The domain's refusals as the runtime's, so each answers its code at the field; a
    model's refusal of the values given is BAD_USER_INPUT."""
    try:
        yield
    except pydantic.ValidationError as exc:
        raise errors.BadArgument(domain.described(exc)) from exc
    except domain.BadUserInput as exc:
        raise errors.BadArgument(str(exc)) from exc
    except domain.NotFound as exc:
        raise errors.NotFound(str(exc)) from exc
    except domain.Forbidden as exc:
        raise errors.Forbidden(str(exc)) from exc
    except domain.Conflict as exc:
        current = exc.extensions.get("currentVersion")
        raise errors.Conflict(str(exc), current) from exc
