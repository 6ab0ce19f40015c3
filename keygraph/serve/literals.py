"""Documents that differ only in the literal values of their arguments share one preparation
and one plan: their literals are normalised into variables, as operation signatures do.

A document's shape is its text with every string and number literal cut out. The first
document of a shape is parsed and validated as written; when it prepares cleanly, each
literal given to a field's argument (at any depth of a list or input object) becomes a
variable of the argument's type, and that normalised document is validated and kept. A later
document of the same shape takes each literal as the value of its variable, once the literal
is checked against the type as validation would check it, and runs the kept document with
those values: one regular-expression pass and a coercion per literal, in place of parsing,
validating, costing and compiling again.

Whatever a shape cannot vouch for is left to the document as written: a literal that is not
valid where it stands (wrong type, Int out of range, an id that is no ID), a literal outside
a field argument that differs from the first document's, a document of several operations.
Errors that point into the document are moved to where the request's own text has them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FloatValueNode,
    GraphQLError,
    GraphQLID,
    GraphQLInputType,
    GraphQLInt,
    GraphQLList,
    GraphQLNonNull,
    GraphQLSchema,
    GraphQLString,
    IntValueNode,
    ListTypeNode,
    NamedTypeNode,
    NameNode,
    NonNullTypeNode,
    OperationDefinitionNode,
    Source,
    StringValueNode,
    TypeInfo,
    TypeInfoVisitor,
    TypeNode,
    ValueNode,
    VariableDefinitionNode,
    VariableNode,
    Visitor,
    coerce_input_value,
    get_nullable_type,
    parse_value,
    validate,
    value_from_ast,
    value_from_ast_untyped,
    visit,
)
from graphql.language import Lexer, TokenKind
from graphql.pyutils import Undefined

_LITERALS = re.compile(
    r'(?=[#"0-9-])(?:'
    r"(?P<c>#[^\n\r]*)"
    r'|(?P<b>"""(?:\\"""|[^"\\]|"(?!"")|\\)*+""")'
    r'|(?P<s>"[^"\\\n\r]*+(?:\\.[^"\\\n\r]*+)*+")'
    r"|(?<![_0-9A-Za-z.])(?:"
    r"(?P<f>-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+))"
    r"|(?P<i>-?[0-9]+)))"
)
"""Comments (skipped), block strings, strings, floats and ints: a literal's kind is the
name of its group. A number cannot start inside a name (`user2`)."""

_TOKEN_KINDS = {
    TokenKind.BLOCK_STRING: "b",
    TokenKind.STRING: "s",
    TokenKind.FLOAT: "f",
    TokenKind.INT: "i",
}
_BEFORE = frozenset(" \t\n\r,:([{")
_AFTER = frozenset(" \t\n\r,)]}")
"""What a normalised literal must stand between in the first document: characters that end
any token before it and after it, so that another literal in its place lexes alike."""
_PLAIN_STRING = re.compile(r'"[^"\\\x00-\x1f\x7f\ud800-\udfff]*"')
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")


@dataclass(frozen=True, slots=True)
class Split:
    """A text's literals: the shape they leave (the key of its cache entry), and where
    each is, with its kind."""

    key: str
    spans: tuple[tuple[int, int], ...]
    kinds: str


def split(text: str) -> Split | None:
    """The text's literals; None when it has none (or holds NUL, which marks them)."""
    if "\x00" in text:
        return None
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    kinds: list[str] = []
    last = 0
    for match in _LITERALS.finditer(text):
        kind = match.lastgroup
        if kind == "c" or kind is None:
            continue
        start, end = match.span()
        parts.append(text[last:start])
        parts.append("\x00" + kind)
        spans.append((start, end))
        kinds.append(kind)
        last = end
    if not spans:
        return None
    parts.append(text[last:])
    return Split("".join(parts), tuple(spans), "".join(kinds))


@dataclass(frozen=True, slots=True)
class _Slot:
    """A literal of the first document of a shape: the variable it became, with its type,
    or (None) the text every document of the shape must have there. `plain` names the
    built-in scalar whose plain literals take a shortcut to their value (or is None)."""

    name: str | None
    type: GraphQLInputType | None
    text: str
    plain: str | None = None


class Shape:
    """What documents of one shape share: the normalised document (None when the shape
    cannot be normalised) and its literals' slots, with where they are in its text."""

    def __init__(
        self, document: DocumentNode | None, slots: tuple[_Slot, ...], split: Split
    ) -> None:
        self.document = document
        self.slots = slots
        self.spans = split.spans
        self.kinds = split.kinds

    def bind(self, text: str, found: Split, variables: dict[str, Any]) -> Binding | None:
        """`text`'s literals as the values of their variables, after the client's own;
        None when one is not valid where it stands, or a slot left as written differs."""
        values = dict(variables)
        for slot, kind, (start, end) in zip(self.slots, found.kinds, found.spans, strict=True):
            literal = text[start:end]
            if slot.name is None or slot.type is None:
                if literal != slot.text:
                    return None
                continue
            value = _plain(literal, kind, slot.plain) if slot.plain else Undefined
            if value is Undefined:
                value = _value(literal, kind, slot.type)
            if value is Undefined:
                return None
            values[slot.name] = value
        return Binding(self, text, found.spans, values)


def _plain(literal: str, kind: str, scalar: str) -> Any:
    """The value of a string without escapes given to an ID or a String, or of an Int
    within 32 bits, as `_value` would find it; else Undefined (`_value` decides)."""
    if kind == "s" and scalar != "Int" and _PLAIN_STRING.fullmatch(literal):
        return literal[1:-1]
    if kind == "i" and scalar == "Int" and _PLAIN_INT.fullmatch(literal):
        number = int(literal)
        if -(2**31) <= number < 2**31:
            return number
    return Undefined


def _value(literal: str, kind: str, type_: GraphQLInputType) -> Any:
    """The value a variable takes for `literal`, when graphql-core would take the literal
    where it stands with the same result; else Undefined."""
    node: ValueNode
    if kind == "s" and _PLAIN_STRING.fullmatch(literal):
        node = StringValueNode(value=literal[1:-1])
    elif kind == "i" and _PLAIN_INT.fullmatch(literal):
        node = IntValueNode(value=literal)
    else:
        try:
            node = parse_value(literal)
        except GraphQLError:
            return Undefined
        if _kind_of(node) != kind:
            return Undefined
    as_literal = value_from_ast(node, type_)
    if as_literal is Undefined:
        return Undefined
    raw = value_from_ast_untyped(node)
    try:
        as_variable = coerce_input_value(raw, type_)
    except GraphQLError:
        return Undefined
    if type(as_variable) is not type(as_literal) or as_variable != as_literal:
        return Undefined
    return raw


def _kind_of(node: ValueNode) -> str | None:
    if isinstance(node, StringValueNode):
        return "b" if node.block else "s"
    if isinstance(node, IntValueNode):
        return "i"
    if isinstance(node, FloatValueNode):
        return "f"
    return None


class Binding:
    """One request's document as its shape's normalised document and variables: the
    client's, and one per literal."""

    def __init__(
        self,
        shape: Shape,
        text: str,
        spans: tuple[tuple[int, int], ...],
        variables: dict[str, Any],
    ) -> None:
        self.shape = shape
        self.text = text
        self.spans = spans
        self.variables = variables

    def position(self, position: int) -> int:
        """Where a character of the shape's first document is in this request's text."""
        shift = 0
        for (start, end), (now_start, now_end) in zip(self.shape.spans, self.spans, strict=True):
            if position < start:
                break
            if position < end:
                return now_start
            shift = now_end - end
        return position + shift

    def rebase(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        """The errors with their locations in this request's text."""
        source: Source | None = None
        rebased = []
        for error in errors:
            if not error.positions or error.source is None:
                rebased.append(error)
                continue
            source = source or Source(self.text)
            rebased.append(
                GraphQLError(
                    error.message,
                    None,
                    source,
                    [self.position(position) for position in error.positions],
                    error.path,
                    error.original_error,
                    error.extensions,
                )
            )
        return rebased


def normalise(
    schema: GraphQLSchema,
    rules: tuple[type[ASTValidationRule], ...],
    text: str,
    found: Split,
    document: DocumentNode,
) -> Shape:
    """The shape of `text`, whose `document` is parsed and valid: its literals given to
    field arguments made variables, the rest kept as written. Its document is None when
    nothing can be normalised, or when the normalised document does not validate (two
    fields of one response key that differ in a literal, for one)."""
    literal_tokens = _literal_tokens(text)
    kept = tuple(_Slot(None, None, text[start:end]) for start, end in found.spans)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if literal_tokens != list(zip(found.spans, found.kinds, strict=True)) or len(operations) != 1:
        return Shape(None, kept, found)
    operation = operations[0]
    taken = {v.variable.name.value for v in operation.variable_definitions or ()}
    prefix = "_l"
    while any(name.startswith(prefix) for name in taken):
        prefix += "_"
    delimited = {
        start: index
        for index, (start, end) in enumerate(found.spans)
        if start > 0 and text[start - 1] in _BEFORE and end < len(text) and text[end] in _AFTER
    }
    type_info = TypeInfo(schema)
    normaliser = _Normaliser(type_info, delimited, prefix)
    normalised = visit(document, TypeInfoVisitor(type_info, normaliser))
    if not normaliser.types:
        return Shape(None, kept, found)
    types = normaliser.types
    slots = tuple(
        _Slot(f"{prefix}{index}", types[index], slot.text, _plain_scalar(types[index]))
        if index in types
        else slot
        for index, slot in enumerate(kept)
    )
    definitions = list(normalised.definitions)
    at = next(i for i, d in enumerate(definitions) if isinstance(d, OperationDefinitionNode))
    operation = definitions[at]
    assert isinstance(operation, OperationDefinitionNode)
    added = tuple(
        VariableDefinitionNode(
            variable=VariableNode(name=NameNode(value=slot.name)),
            type=_type_node(slot.type),
            directives=(),
        )
        for slot in slots
        if slot.name is not None and slot.type is not None
    )
    definitions[at] = replace(
        operation, variable_definitions=(*(operation.variable_definitions or ()), *added)
    )
    normalised = replace(normalised, definitions=tuple(definitions))
    if validate(schema, normalised, rules):
        return Shape(None, kept, found)
    return Shape(normalised, slots, found)


def _literal_tokens(text: str) -> list[tuple[tuple[int, int], str]]:
    """Every string and number token of a text that lexes, with its kind."""
    lexer = Lexer(Source(text))
    found = []
    token = lexer.advance()
    while token.kind != TokenKind.EOF:
        kind = _TOKEN_KINDS.get(token.kind)
        if kind is not None:
            found.append(((token.start, token.end), kind))
        token = lexer.advance()
    return found


class _Normaliser(Visitor):
    """Puts a variable in place of each literal given to a field argument that stands
    between delimiters, noting its type by the literal's index."""

    def __init__(self, type_info: TypeInfo, delimited: dict[int, int], prefix: str) -> None:
        super().__init__()
        self.type_info = type_info
        self.delimited = delimited
        self.prefix = prefix
        self.types: dict[int, GraphQLInputType] = {}

    def enter_int_value(self, node: ValueNode, *_: Any) -> VariableNode | None:
        return self._variable(node)

    def enter_float_value(self, node: ValueNode, *_: Any) -> VariableNode | None:
        return self._variable(node)

    def enter_string_value(self, node: ValueNode, *_: Any) -> VariableNode | None:
        return self._variable(node)

    def _variable(self, node: ValueNode) -> VariableNode | None:
        info = self.type_info
        index = self.delimited.get(node.loc.start) if node.loc is not None else None
        type_ = info.get_input_type()
        if index is None or type_ is None or info.get_directive() is not None:
            return None
        if info.get_argument() is None:
            return None
        self.types[index] = type_
        return VariableNode(name=NameNode(value=f"{self.prefix}{index}"), loc=node.loc)


def _plain_scalar(type_: GraphQLInputType) -> str | None:
    """The built-in scalar whose plain literals `_plain` takes, when `type_` is one."""
    nullable = get_nullable_type(type_)
    return next((s.name for s in (GraphQLID, GraphQLString, GraphQLInt) if nullable is s), None)


def _type_node(type_: GraphQLInputType) -> TypeNode:
    """The type as a variable definition writes it."""
    if isinstance(type_, GraphQLNonNull):
        inner = _type_node(type_.of_type)
        assert isinstance(inner, NamedTypeNode | ListTypeNode)  # GraphQL has no `T!!`
        return NonNullTypeNode(type=inner)
    if isinstance(type_, GraphQLList):
        return ListTypeNode(type=_type_node(type_.of_type))
    return NamedTypeNode(name=NameNode(value=type_.name))
