"""A generated package's GraphQL API: the bindings its `api.py` declares, and the schema
they make executable over any store (`executable`, `execute`), with the fields a hand-written
`Extension` adds."""

from keygraph.paging import PageSize

from .answers import connection
from .bindings import Api, Arg, Bound, Guard, Operation, Relation, Root, Type, Watch
from .cost import estimate
from .executable import ApiContext, executable
from .extension import Extension, combined
from .relations import load_many
from .run import error_code, execute

__all__ = [
    "Api",
    "ApiContext",
    "Arg",
    "Bound",
    "Extension",
    "Guard",
    "Operation",
    "PageSize",
    "Relation",
    "Root",
    "Type",
    "Watch",
    "combined",
    "connection",
    "error_code",
    "estimate",
    "executable",
    "execute",
    "load_many",
]
