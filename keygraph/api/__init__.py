"""A generated package's GraphQL API: the bindings its `api.py` declares, and the schema
they make executable over any store (`executable`, `execute`)."""

from .answers import connection
from .bindings import Api, Arg, Bound, Guard, Operation, Relation, Root, Type, Watch
from .cost import estimate
from .executable import ApiContext, executable
from .run import error_code, execute

__all__ = [
    "Api",
    "ApiContext",
    "Arg",
    "Bound",
    "Guard",
    "Operation",
    "Relation",
    "Root",
    "Type",
    "Watch",
    "connection",
    "error_code",
    "estimate",
    "executable",
    "execute",
]
