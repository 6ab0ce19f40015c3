"""Hostile documents: fragment graphs (deep, wide, doubling, cyclic, unknown, spread inside
inline fragments), many aliases, deep nesting of selections and values, and documents at
and past the token limit. Each shape is a function of its size, so CI runs fixed sizes and a
hunt draws them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keygraph.serve.limits import MAX_ALIASES, MAX_BODY_BYTES, MAX_DEPTH, MAX_TOKENS

USERS = "users(first: 2) { edges { node { ...F0 } } }"
"""Where the fragment graphs are spread: the nodes of a page of users."""


@dataclass(frozen=True)
class Shape:
    """A kind of document, made at a given size."""

    name: str
    make: Callable[[int], str]
    sizes: tuple[int, ...]
    """The sizes CI sends: around the limit that applies, and far past it."""


def _fragments(count: int, body: Callable[[int], str], on: str = "User") -> str:
    return "\n".join(f"fragment F{i} on {on} {{ {body(i)} }}" for i in range(count))


def doubling(levels: int) -> str:
    """Each fragment spreads the next twice: 2**levels spreads when expanded naively."""
    return f"{{ {USERS} }}\n" + _fragments(
        levels + 1, lambda i: f"id ...F{i + 1} ...F{i + 1}" if i < levels else "id"
    )


def doubling_inline(levels: int) -> str:
    """The same doubling with the spreads inside inline fragments."""

    def body(i: int) -> str:
        return f"id ... on User {{ ...F{i + 1} }} ... on Node {{ ...F{i + 1} }}"

    return f"{{ {USERS} }}\n" + _fragments(levels + 1, lambda i: body(i) if i < levels else "id")


def doubling_aliases(levels: int) -> str:
    """Doubling whose spreads sit under two aliases of the same field each time."""
    return "{ viewer { ...F0 } }\n" + _fragments(
        levels + 1,
        lambda i: f"tenant ...F{i + 1} ...F{i + 1}" if i < levels else "tenant subject",
        on="Viewer",
    )


def chain(length: int) -> str:
    """Each fragment spreads the next once."""
    return f"{{ {USERS} }}\n" + _fragments(
        length + 1, lambda i: f"id ...F{i + 1}" if i < length else "name"
    )


def wide(count: int) -> str:
    """One fragment spreading `count` others."""
    spreads = " ".join(f"...G{i}" for i in range(count))
    others = "\n".join(f"fragment G{i} on User {{ id }}" for i in range(count))
    return f"{{ {USERS} }}\nfragment F0 on User {{ {spreads} }}\n{others}"


def cycle(length: int) -> str:
    """Fragments spreading each other round a cycle (a self-spread at 1)."""
    return f"{{ {USERS} }}\n" + _fragments(length, lambda i: f"id ...F{(i + 1) % length}")


def unknown(count: int) -> str:
    """Spreads of fragments never defined, inside inline fragments too."""
    spreads = " ".join(f"...Nope{i} ... on User {{ ...Gone{i} }}" for i in range(count))
    return f"{{ {USERS} }}\nfragment F0 on User {{ id {spreads} }}"


def aliases(count: int) -> str:
    """`count` aliases of one field."""
    return "{ " + " ".join(f"a{i}: viewer {{ tenant }}" for i in range(count)) + " }"


def aliased_pages(count: int) -> str:
    """`count` aliases of a large page each: cost, not aliases, is what refuses it first."""
    page = "users(first: 100) { edges { node { id } } }"
    return "{ " + " ".join(f"p{i}: {page}" for i in range(count)) + " }"


def nested_fields(depth: int) -> str:
    """An org node's parent's parent's ... `depth` deep."""
    return "{ orgRoots { " + "parent { " * depth + "id" + " }" * depth + " } }"


def nested_inline(depth: int) -> str:
    """Inline fragments inside inline fragments, `depth` deep."""
    return "{ viewer { " + "... on Viewer { " * depth + "tenant" + " }" * depth + " } }"


def nested_braces(depth: int) -> str:
    """Selection sets `depth` deep, of fields that do not exist."""
    return "{ " + "a { " * depth + "b" + " }" * depth + " }"


def nested_lists(depth: int) -> str:
    """A list literal `depth` deep as an argument."""
    return "{ user(id: " + "[" * depth + '"x"' + "]" * depth + ") { id } }"


def tokens(count: int) -> str:
    """A document of about `count` tokens: one field asked for over and over."""
    return "{ viewer { " + "tenant " * max(count - 5, 1) + "} }"


def fragment_definitions(count: int) -> str:
    """`count` fragments defined and never used."""
    return "{ viewer { tenant } }\n" + _fragments(count, lambda _: "id")


def long_names(length: int) -> str:
    """An alias, an operation name and a fragment name each `length` characters long."""
    name = "n" * length
    fragment = f"fragment {name} on Viewer {{ tenant }}"
    return f"query {name} {{ {name}: viewer {{ ...{name} }} }} {fragment}"


def whitespace(size: int) -> str:
    """A small query padded with `size` bytes of whitespace and comments."""
    return "{ viewer { tenant } }" + ("\n# padding" * (size // 10))


TOKEN_LIMIT = MAX_TOKENS
SHAPES = [
    Shape("doubling fragments", doubling, (16,)),
    Shape("doubling fragments in inline fragments", doubling_inline, (16,)),
    Shape("doubling fragments under aliases", doubling_aliases, (16,)),
    Shape("fragment chain", chain, (MAX_DEPTH, 200)),
    Shape("wide fragment", wide, (MAX_ALIASES + 1, 400)),
    Shape("fragment cycle", cycle, (1, 2, 50)),
    Shape("unknown fragments", unknown, (1, 100)),
    Shape("aliases", aliases, (MAX_ALIASES, MAX_ALIASES + 1, 400)),
    Shape("aliased pages", aliased_pages, (3, 30)),
    Shape("nested fields", nested_fields, (MAX_DEPTH, MAX_DEPTH + 1, 300)),
    Shape("nested inline fragments", nested_inline, (MAX_DEPTH + 1, 300, 3000)),
    Shape("nested selections", nested_braces, (300, 3000)),
    Shape("nested list literal", nested_lists, (300, 3000)),
    Shape("tokens", tokens, (TOKEN_LIMIT - 10, TOKEN_LIMIT + 1, 60_000)),
    Shape("unused fragments", fragment_definitions, (1, 300)),
    Shape("long names", long_names, (10_000,)),
    Shape("whitespace and comments", whitespace, (MAX_BODY_BYTES - 1000,)),
]
