"""A generated package's GraphQL API: the bindings its `api.py` declares, and the schema
they make executable over any store (`executable`, `execute`), with the fields a written
`Extension` adds, whose subscriptions follow the spec's (`changes`)."""

from keygraph.paging import PageSize

from .answers import connection
from .bindings import Api, Arg, Bound, Guard, Operation, Relation, Root, Type, Watch
from .cost import estimate
from .executable import ApiContext, executable
from .extension import Extension, combined
from .follows import Changed, changes
from .relations import load_many, query_once
from .run import error_code, execute

__all__ = [
    "Api",
    "ApiContext",
    "Arg",
    "Bound",
    "Changed",
    "Extension",
    "Guard",
    "Operation",
    "PageSize",
    "Relation",
    "Root",
    "Type",
    "Watch",
    "changes",
    "combined",
    "connection",
    "error_code",
    "estimate",
    "executable",
    "execute",
    "load_many",
    "query_once",
]
