"""A generated package's GraphQL API: the bindings its `api.py` declares, and the schema
they make executable over any store (`executable`, `execute`)."""

from .bindings import Api, Arg, Guard, Operation, Root, Type
from .executable import ApiContext, connection, executable
from .run import error_code, execute

__all__ = [
    "Api",
    "ApiContext",
    "Arg",
    "Guard",
    "Operation",
    "Root",
    "Type",
    "connection",
    "error_code",
    "executable",
    "execute",
]
