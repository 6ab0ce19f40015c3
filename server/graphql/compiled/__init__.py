"""Compiled execution on Strawberry's schema: the runtime's compiler and runs
(keygraph/execution) over Strawberry's fields. Operations the compiler does not cover
(introspection, @defer) run on Strawberry."""
