"""Runs an operation's plan: the resolvers a selection needs are called directly and values
complete in one pass; what resolvers leave awaiting completes as it settles (waves.py).
Errors, paths and null propagation follow graphql-core's rules: a failed non-null field
nulls its nearest nullable ancestor, and errors below a nulled position are dropped. A
streamed response's outermost list with work below completes in parts (parts.py)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from graphql import GraphQLError, located_error
from graphql.execution.executor import invalid_return_type_error
from graphql.pyutils import Path, Undefined, inspect

from .parts import PartedList
from .plan import (
    Abstract,
    Completion,
    FieldPlan,
    Leaf,
    ListOf,
    NonNull,
    Object,
    ObjectPlan,
    OperationPlan,
    unchanged,
    whole_items,
)
from .waves import Pending, Place, Waves, in_parts, is_dead


class Run(Waves):
    """One execution of a plan for one executor (its context, variables and errors)."""

    def __init__(self, executor: Any, plan: OperationPlan) -> None:
        super().__init__()
        self.executor = executor
        self.plan = plan
        self.errors = executor.collected_errors
        self.is_awaitable = executor.is_awaitable
        self.arguments: dict[int, Any] = {}
        self.root = Place(None, None, "", None, True)
        self.data: dict[str, Any] | None = {}
        self.ctx = executor.context_value
        self.stream = getattr(self.ctx, "stream", None)
        self.parted: deque[PartedList] = deque()

    def start(self) -> Any:
        """The ExecutionResult, or an awaitable of it when some resolver awaits."""
        if self.plan.serial:
            return self._serially()
        self._fill(self.plan.root, self.executor.root_value, self.data, None, self.root)
        if not self.pending and not self.parted:
            return self.executor.build_response(self.data)
        return self._waves()

    async def _waves(self) -> Any:
        await self._finish()
        return self.executor.build_response(self.data)

    async def _finish(self) -> None:
        """Completes what is pending, then each list answered in parts, part by part: a
        part's items are serialized, and the request's loads forgotten, before the next
        part's fields are resolved (parts.py)."""
        await self._drain()
        while self.parted:
            parted = self.parted[0]
            place = parted.place
            if is_dead(place):
                self.parted.popleft()
                continue
            parted.flush()
            if parted.done == len(parted.values):
                self.parted.popleft()
                assert place.container is not None
                if place.container[place.key] is parted.items:  # type: ignore[index]
                    place.container[place.key] = parted.placeholder  # type: ignore[index]
                continue
            self.ctx.forget()
            try:
                self._next_part(parted)
            except GraphQLError as error:
                self._null(place, error)
                continue
            await self._drain()

    async def _serially(self) -> Any:
        """Mutation root fields, each finished (with everything below it) before the next."""
        root = self.plan.root
        for field in root.fields:
            if self.data is None:
                break
            self._fill(
                ObjectPlan(root.object_type, [field], None),
                self.executor.root_value,
                self.data,
                None,
                self.root,
            )
            await self._finish()
        return self.executor.build_response(self.data)

    def _fill(
        self,
        plan: ObjectPlan,
        source: Any,
        out: dict[str, Any] | None,
        path: Path | None,
        owner: Place,
    ) -> None:
        """Completes the root selection into `out`; a failure of a non-null root field
        nulls the whole data."""
        try:
            self._fields(plan, source, out if out is not None else {}, path, owner)
        except GraphQLError as error:
            self._null(self.root, error)

    def _fields(
        self,
        plan: ObjectPlan,
        source: Any,
        out: dict[str, Any],
        path: Path | None,
        owner: Place,
    ) -> dict[str, Any]:
        """Fills `out` with the plan's fields of `source`; raises the located error of a
        failed non-null field, for the caller to null this object."""
        type_name = plan.object_type.name
        fill = plan.fill
        for field in plan.rest if fill is not None and fill(source, out) else plan.fields:
            if field.typename:
                out[field.key] = type_name
                continue
            field_path = None if field.leaf else Path(path, field.key, type_name)
            mark = len(self.pending)
            try:
                if field.attribute is not None:
                    value = getattr(source, field.attribute)
                else:
                    if field_path is None:
                        field_path = Path(path, field.key, type_name)
                    if field.batch is not None:
                        if field.takes_arguments:
                            self._arguments(field)  # raises for this call as the resolver's
                        self._defer(field, source, out, field_path, owner)
                        continue
                    value = self._call(field, source, field_path)
                    if self.is_awaitable(value):
                        out[field.key] = None
                        self.pending.append(Pending(field, value, out, field_path, owner))
                        continue
                out[field.key] = self._complete(
                    field.completion, field, value, field_path, owner, out, field.key
                )
            except Exception as raw:
                self._drop_from(mark)
                error_path = field_path or Path(path, field.key, type_name)
                error = located_error(raw, field.nodes, error_path.as_list())
                if not field.nullable:
                    raise error from None
                self.errors.add(error, error_path)
                out[field.key] = None
        return out

    def _call(self, field: FieldPlan, source: Any, path: Path) -> Any:
        kwargs = self._arguments(field) if field.takes_arguments else {}
        assert field.resolver is not None
        if field.positional:
            assert field.info_of is not None
            return field.resolver(source, field.info_of(self.executor, field, path), **kwargs)
        if field.info_name is not None or field.source_names:
            kwargs = dict(kwargs)
            if field.info_name is not None:
                assert field.info_of is not None
                kwargs[field.info_name] = field.info_of(self.executor, field, path)
            for name in field.source_names:
                kwargs[name] = source
        if field.pass_self:
            return field.resolver(source, **kwargs)
        return field.resolver(**kwargs)

    def _arguments(self, field: FieldPlan) -> dict[str, Any]:
        """The field's arguments as its resolver takes them, converted once per request."""
        found = self.arguments.get(id(field))
        if found is None:
            try:
                assert field.arguments_of is not None
                found = field.arguments_of(self.executor, field)
            except Exception as error:  # each call of the field raises it again
                found = error
            self.arguments[id(field)] = found
        if isinstance(found, Exception):
            raise found
        return found

    def _complete(
        self,
        completion: Completion,
        field: FieldPlan,
        value: Any,
        path: Path | None,
        owner: Place,
        container: dict[str, Any] | list[Any],
        key: str | int,
        nullable: bool = True,
    ) -> Any:
        """The completed value of `value` for its place container[key] (where the caller
        stores it); raises when it cannot complete."""
        if type(completion) is NonNull:
            if value is None:
                message = (
                    f"Cannot return null for non-nullable field"
                    f" {field.parent_type.name}.{field.name}."
                )
                raise TypeError(message)
            completion = completion.inner
            nullable = False
        elif value is None or value is Undefined:
            return None
        kind = type(completion)
        if kind is Leaf:
            exact = completion.exact  # type: ignore[union-attr]
            if type(value) is exact and (exact is str or unchanged(value)):
                return value
            coerced = completion.scalar.coerce_output_value(value)  # type: ignore[union-attr]
            if coerced is Undefined or coerced is None:
                message = (
                    f"Expected `{inspect(completion.scalar)}.coerce_output_value("  # type: ignore[union-attr]
                    f"{inspect(value)})` to return non-nullable value, returned:"
                    f" {inspect(coerced)}"
                )
                raise TypeError(message)
            return coerced
        assert path is not None
        if kind is ListOf:
            return self._list(completion, field, value, path, owner, container, key, nullable)  # type: ignore[arg-type]
        if kind is Object:
            plan = completion.plan  # type: ignore[union-attr]
        else:
            plan = self._runtime_plan(completion, field, value, path)  # type: ignore[arg-type]
        if (
            plan.is_type_of is not None
            and type(value) is not plan.origin
            and not plan.is_type_of(value, None)
        ):
            raise invalid_return_type_error(plan.object_type, value, field.details)
        whole = plan.whole
        if whole is not None:  # plain fields only: no place needed for work below
            out: dict[str, Any] = {}
            if whole[0](value, out):
                return out
        place = Place(owner, container, key, path, nullable)
        return self._fields(plan, value, {}, path, place)

    def _list(
        self,
        completion: ListOf,
        field: FieldPlan,
        value: Any,
        path: Path,
        owner: Place,
        container: dict[str, Any] | list[Any],
        key: str | int,
        nullable: bool,
    ) -> list[Any]:
        if not isinstance(value, Iterable) or isinstance(value, str | bytes | dict):
            message = (
                "Expected Iterable, but did not find one for field"
                f" '{field.parent_type.name}.{field.name}'."
            )
            raise GraphQLError(message)
        items: list[Any] = []
        inner = completion.inner
        leaf = type(inner) is Leaf or (type(inner) is NonNull and type(inner.inner) is Leaf)
        place = owner if leaf else Place(owner, container, key, path, nullable)
        fill, origin = whole_items(inner)
        if self.stream is not None and fill is None and not leaf and not in_parts(owner):
            value = list(value)
            if len(value) > 1:
                return self._parted(completion, field, value, path, place)
        for index, item in enumerate(value):
            if fill is not None and item is not None and (origin is None or type(item) is origin):
                out: dict[str, Any] = {}
                if fill(item, out):
                    items.append(out)
                    continue
            self._item(completion, field, item, index, path, place, items)
        return items

    def _item(
        self,
        completion: ListOf,
        field: FieldPlan,
        item: Any,
        index: int,
        path: Path,
        place: Place,
        items: list[Any],
    ) -> None:
        """Appends the completed item; raises when a non-null item cannot complete."""
        item_path = Path(path, index, None)
        mark = len(self.pending)
        try:
            items.append(
                self._complete(completion.inner, field, item, item_path, place, items, index)
            )
        except Exception as raw:
            self._drop_from(mark)
            error = located_error(raw, field.nodes, item_path.as_list())
            if not completion.items_nullable:
                raise error from None
            self.errors.add(error, item_path)
            items.append(None)

    def _parted(
        self, completion: ListOf, field: FieldPlan, values: list[Any], path: Path, place: Place
    ) -> list[Any]:
        """The list's items, its first part completed; the others complete in `_finish`."""
        assert self.stream is not None
        part, placeholder = self.stream.part(path.as_list(), lambda: not is_dead(place))
        place.parted = True
        budget = self.stream.part_objects
        parted = PartedList(completion, field, values, path, place, part, placeholder, [], budget)
        if part.shape.item_cost:  # the first part by the estimate, the others by what it held
            parted.size = max(1, budget // part.shape.item_cost)
        else:
            parted.size = len(values)
        self.parted.append(parted)
        self._next_part(parted)
        return parted.items

    def _next_part(self, parted: PartedList) -> None:
        """Completes the list's next part; raises when a non-null item cannot complete."""
        end = min(parted.next + parted.size, len(parted.values))
        for index in range(parted.next, end):
            value, parted.values[index] = parted.values[index], None
            self._item(
                parted.completion,
                parted.field,
                value,
                index,
                parted.path,
                parted.place,
                parted.items,
            )
        parted.next = end

    def _runtime_plan(
        self, completion: Abstract, field: FieldPlan, value: Any, path: Path
    ) -> ObjectPlan:
        name = completion.by_class.get(type(value))
        if name is None:
            executor = self.executor
            definition = field.parent_type.fields[field.name]
            info = executor.build_resolve_info(definition, field.nodes, field.parent_type, path)
            abstract = completion.abstract
            resolve_type = abstract.resolve_type or executor.type_resolver
            resolved = resolve_type(value, info, abstract)
            runtime = executor.ensure_valid_runtime_type(
                resolved, abstract, field.details, info, value
            )
            name = runtime.name
        return completion.plans[name]

    def _settled(self, pending: Pending, result: Any) -> None:
        if is_dead(pending.owner):
            return
        field, out, path = pending.field, pending.out, pending.path
        try:
            if isinstance(result, BaseException):
                raise result
            out[field.key] = self._complete(
                field.completion, field, result, path, pending.owner, out, field.key
            )
        except Exception as raw:
            error = located_error(raw, field.nodes, path.as_list())
            if field.nullable:
                self.errors.add(error, path)
                out[field.key] = None
            else:
                self._null(pending.owner, error)

    def _null(self, place: Place, error: GraphQLError) -> None:
        """Nulls the nearest nullable place from `place` up (the data, at the top) for
        `error`, which is kept unless a place above was nulled before."""
        while not place.nullable and place.parent is not None:
            place = place.parent
        if place.parent is None:
            self.data = None
            self.errors.add(error, None)
        else:
            assert place.container is not None
            place.container[place.key] = None  # type: ignore[index]
            self.errors.add(error, place.path)
        place.dead = True
        if self.running:
            self._abandon_dead()
