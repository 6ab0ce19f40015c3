"""Lint's messages on specs a newcomer writes (lint_specs/: a paper catalog, a store, a shop
with a category tree), each broken one way: the messages, one per cause, as
lint_specs/expected/<case>.txt has them (KEYGRAPH_UPDATE_GOLDENS=1 rewrites them), and their
fixes, which applied to the spec leave it clean."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen import pipeline
from codegen.diagnostics import Problem, SpecErrors
from tests.codegen.spec_edits import apply

SPECS = Path(__file__).with_name("lint_specs")
EXPECTED = SPECS / "expected"
UPDATE = os.environ.get("KEYGRAPH_UPDATE_GOLDENS") == "1"


@dataclass(frozen=True)
class Case:
    name: str
    spec: str
    changes: tuple[tuple[str, str], ...]
    """(text, what replaces it) in the spec."""
    clean: bool = True
    """Whether the fixes leave the spec clean (False where they leave a choice that only the
    author can make, such as who may read each entity)."""


def mutate(case: Case) -> str:
    text = (SPECS / case.spec).read_text(encoding="utf-8")
    for old, new in case.changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


GLOBAL = ('sort_key = "SK"\n', 'sort_key = "SK"\ntenancy = "global"\n')
"""The paper catalog as meant: its items are everyone's."""

CASES = [
    # tenancy
    Case("no_tenant_anywhere", "paper_catalog.toml", ()),
    Case(
        "entity_without_tenant",
        "store.toml",
        (
            (
                'keys.PK = "T#{tenant}#CUSTOMER#{customer_id}"\nkeys.SK = "PROFILE"',
                'keys.PK = "CUSTOMER#{customer_id}"\nkeys.SK = "PROFILE"',
            ),
        ),
    ),
    Case(
        "index_key_without_tenant",
        "store.toml",
        (
            ('keys.StatusPK = "T#{tenant}#STATUS#{status}"', 'keys.StatusPK = "STATUS#{status}"'),
            ('partition = "T#{tenant}#STATUS#{status}"', 'partition = "STATUS#{status}"'),
        ),
    ),
    Case(
        "pattern_without_tenant",
        "store.toml",
        (
            (
                '[patterns.customer_orders]\noperation = "query"\npartition = "T#{tenant}#CUSTOMER',
                '[patterns.customer_orders]\noperation = "query"\npartition = "CUSTOMER',
            ),
        ),
    ),
    Case(
        "tenant_entity_without_tenant",
        "paper_catalog.toml",
        (GLOBAL, ('type = "PAPER"\n', 'type = "PAPER"\ntenancy = "tenant"\n')),
    ),
    Case(
        "global_entity_with_tenant",
        "category_shop.toml",
        (('type = "CATEGORY"\n', 'type = "CATEGORY"\ntenancy = "global"\n'),),
    ),
    Case(
        "global_query_with_tenant",
        "paper_catalog.toml",
        (
            GLOBAL,
            ('partition = "AUTHOR#{author_id}"', 'partition = "T#{tenant}#AUTHOR#{author_id}"'),
        ),
    ),
    Case(
        "tenant_and_global_in_one_query",
        "paper_catalog.toml",
        (
            GLOBAL,
            (
                "[patterns.paper]",
                '[entities.Note]\ntype = "NOTE"\ntenancy = "tenant"\n'
                'attributes.paper_id = { type = "id" }\n'
                'keys.PK = "T#{tenant}#PAPER#{paper_id}"\nkeys.SK = "AUTHOR#NOTE"\n\n'
                "[patterns.paper]",
            ),
            ('returns = ["Authorship"]\n', 'returns = ["Authorship", "Note"]\n'),
        ),
    ),
    # sort conditions
    Case(
        "prefix_over_an_item_and_its_children",
        "store.toml",
        (
            (
                'sort = { collection = "ORDER#{placed_on}#{order_id}" }',
                'sort = { begins_with = "ORDER#{placed_on}#{order_id}" }',
            ),
        ),
    ),
    Case(
        "prefix_over_a_subtree",
        "category_shop.toml",
        (('sort = { collection = "CAT#{path}" }', 'sort = { begins_with = "CAT#{path}" }'),),
    ),
    Case(
        "prefix_inside_a_literal",
        "category_shop.toml",
        (('sort = { begins_with = "PRICE#" }', 'sort = { begins_with = "PRICE" }'),),
    ),
    Case(
        "prefix_inside_a_value",
        "category_shop.toml",
        (('sort = { begins_with = "PRICE#" }', 'sort = { begins_with = "PRICE#{price_cents}" }'),),
    ),
    Case(
        "eq_on_the_start_of_keys",
        "store.toml",
        (('sort = { begins_with = "ORDER#" }', 'sort = { eq = "ORDER#{placed_on}" }'),),
    ),
    Case(
        "eq_on_an_item_with_children",
        "store.toml",
        (
            (
                'sort = { collection = "ORDER#{placed_on}#{order_id}" }',
                'sort = { eq = "ORDER#{placed_on}#{order_id}" }',
            ),
        ),
    ),
    Case(
        "prefix_past_an_item",
        "store.toml",
        (
            (
                'sort = { collection = "ORDER#{placed_on}#{order_id}" }',
                'sort = { begins_with = "ORDER#{placed_on}#{order_id}#" }',
            ),
        ),
    ),
    Case(
        "prefix_past_the_only_item",
        "paper_catalog.toml",
        (
            GLOBAL,
            (
                'sort = { begins_with = "AUTHOR#" }',
                'sort = { begins_with = "AUTHOR#{author_id}#" }',
            ),
        ),
    ),
    # what a query reads
    Case(
        "query_without_sort_reads_more",
        "store.toml",
        (('sort = { begins_with = "ORDER#" }\n', ""),),
    ),
    Case(
        "range_reads_more",
        "store.toml",
        (('sort = { begins_with = "ORDER#" }', 'sort = { gt = "ORDER#{placed_on}" }'),),
    ),
    Case(
        "between_reads_more",
        "store.toml",
        (
            (
                'sort = { begins_with = "ORDER#" }\ndirection = "descending"\n'
                'returns = ["Order", "OrderLine"]',
                'sort = { between = ["ORDER#{from}", "ORDER#{to}"] }\n'
                'args = { from = { type = "date" }, to = { type = "date" } }\n'
                'direction = "descending"\nreturns = ["Order"]',
            ),
        ),
    ),
    Case(
        "between_over_keys_without_a_literal",
        "store.toml",
        (
            (
                'keys.SK = "ORDER#{placed_on}#{order_id}#LINE#{line}"',
                'keys.SK = "ORDER#{placed_on}#{order_id}#LINE#{line}"\n'
                'attributes.status = { type = "enum", values = ["OPEN", "PAID", "SHIPPED"] }\n'
                'keys.StatusPK = "T#{tenant}#STATUS#{status}"\n'
                'keys.StatusSK = "LINE#{placed_on}#{order_id}#{line}"',
            ),
            (
                'partition = "T#{tenant}#STATUS#{status}"\n',
                'partition = "T#{tenant}#STATUS#{status}"\n'
                'sort = { between = ["{from}", "{to}"] }\n'
                'args = { from = { type = "date" }, to = { type = "date" } }\n',
            ),
        ),
    ),
    Case(
        "collection_without_its_head",
        "store.toml",
        (
            (
                '{order_id}" }\nreturns = ["Order", "OrderLine"]',
                '{order_id}" }\nreturns = ["OrderLine"]',
            ),
        ),
    ),
    Case(
        "partition_of_no_key",
        "store.toml",
        (('partition = "T#{tenant}#STATUS#{status}"', 'partition = "T#{tenant}#STATE#{status}"'),),
    ),
    Case(
        "partition_of_no_key_of_two_entities",
        "store.toml",
        (
            (
                'operation = "query"\npartition = "T#{tenant}#CUSTOMER#',
                'operation = "query"\npartition = "T#{tenant}#CUSTOMR#',
            ),
        ),
    ),
    Case(
        "partition_with_no_value_of_its_enum",
        "store.toml",
        (('partition = "T#{tenant}#STATUS#{status}"', 'partition = "T#{tenant}#STATUS#PAYED"'),),
    ),
    Case(
        "partition_of_another_index",
        "store.toml",
        (('index = "ByStatus"\n', ""),),
    ),
    # keys
    Case(
        "key_without_length_limit",
        "paper_catalog.toml",
        (
            GLOBAL,
            (
                'attributes.topic = { type = "string", max_length = 40, optional = true }',
                'attributes.topic = { type = "string", optional = true }',
            ),
        ),
    ),
    Case(
        "one_unbounded_attribute_in_two_keys",
        "store.toml",
        (
            (
                'attributes.email = { type = "string", max_length = 254 }',
                'attributes.email = { type = "string" }',
            ),
            (
                'keys.SK = "PROFILE"',
                'keys.SK = "PROFILE"\nkeys.StatusPK = "T#{tenant}#EMAIL#{email}"\n'
                'keys.StatusSK = "{email}"',
            ),
        ),
    ),
    Case(
        "key_too_long",
        "paper_catalog.toml",
        (GLOBAL, ('keys.TopicSK = "{year}#{paper_id}"', 'keys.TopicSK = "{year}#{title}"')),
    ),
    Case(
        "key_too_long_for_an_id_of_several_entities",
        "store.toml",
        (
            (
                'keys.StatusSK = "{placed_on}#{order_id}"',
                'keys.StatusSK = "{customer_id}#{order_id}"',
            ),
        ),
    ),
    Case(
        "unknown_placeholder",
        "store.toml",
        (
            (
                'keys.SK = "ORDER#{placed_on}#{order_id}"\n',
                'keys.SK = "ORDER#{placed_on}#{order_ident}"\n',
            ),
        ),
    ),
    Case(
        "int_without_width",
        "category_shop.toml",
        (("le = 99999999, width = 8", "le = 99999999"),),
    ),
    Case(
        "int_without_width_in_two_keys",
        "paper_catalog.toml",
        (
            GLOBAL,
            (
                'keys.GSI1SK = "PAPER#{year}#{paper_id}"',
                'keys.GSI1SK = "PAPER#{year}#{paper_id}"\nkeys.SK = "AUTHOR#{author_id}#{year}"',
            ),
            ('keys.SK = "AUTHOR#{author_id}"\n', ""),
            ("le = 2100, width = 4 }\nkeys.PK", "le = 2100 }\nkeys.PK"),
        ),
    ),
    Case(
        "int_wider_than_width",
        "paper_catalog.toml",
        (
            GLOBAL,
            (
                "ge = 1900, le = 2100, width = 4 }\nattributes.topic",
                "ge = 1900, le = 12000, width = 4 }\nattributes.topic",
            ),
        ),
    ),
    Case(
        "collection_child_without_literal",
        "store.toml",
        (
            (
                'keys.SK = "ORDER#{placed_on}#{order_id}#LINE#{line}"',
                'keys.SK = "ORDER#{placed_on}#{order_id}#{line}"',
            ),
        ),
    ),
    Case(
        "template_without_delimiter",
        "store.toml",
        (("T#{tenant}#CUSTOMER#{customer_id}", "T#{tenant}#CUSTOMER{customer_id}"),),
    ),
    Case(
        "setting_of_another_type",
        "category_shop.toml",
        (
            (
                '{ type = "string", max_length = 100 }',
                '{ type = "string", max_length = 100, ge = 1 }',
            ),
        ),
    ),
    # authorization
    Case(
        "misspelt_role",
        "category_shop.toml",
        (("""staff = 'role = "admin"'""", """staff = 'role = "admn"'"""),),
    ),
    Case(
        "misspelt_named_rule",
        "category_shop.toml",
        (('access.default = "staff"', 'access.default = "staf"'),),
    ),
    Case(
        "rules_without_roles",
        "store.toml",
        (('entity = "Customer"\n', 'entity = "Customer"\nallow = \'role = "admin"\'\n'),),
        clean=False,
    ),
    # shape
    Case("entity_without_type", "store.toml", (('type = "ORDER_LINE"\n', ""),)),
    Case(
        "pattern_without_operation",
        "store.toml",
        (('[patterns.orders_by_status]\noperation = "query"\n', "[patterns.orders_by_status]\n"),),
    ),
    # references
    Case(
        "misspelt_index",
        "store.toml",
        (('index = "ByStatus"', 'index = "ByStatuss"'),),
    ),
    Case(
        "misspelt_entity",
        "store.toml",
        (
            (
                'direction = "descending"\nreturns = ["Order"]\n',
                'direction = "descending"\nreturns = ["Orders"]\n',
            ),
        ),
    ),
    # how a path reads in a global id
    Case(
        "id_separator_on_a_string",
        "category_shop.toml",
        (
            (
                'attributes.name = { type = "string", max_length = 100 }',
                'attributes.name = { type = "string", max_length = 100, id_separator = "." }',
            ),
        ),
    ),
    Case(
        "id_separator_not_one_mark",
        "category_shop.toml",
        (('pattern = "^[a-z0-9-]+$" }', 'pattern = "^[a-z0-9-]+$", id_separator = "::" }'),),
    ),
]


def _problems(text: str) -> tuple[Problem, ...]:
    try:
        pipeline.analyse(text, "spec.toml")
    except SpecErrors as exc:
        return exc.problems
    return ()


@pytest.mark.parametrize("spec", sorted(p.name for p in SPECS.glob("*.toml")))
def test_the_specs_as_meant_are_clean(spec: str) -> None:
    text = (SPECS / spec).read_text(encoding="utf-8")
    if spec == "paper_catalog.toml":
        text = text.replace(*GLOBAL)
    assert _problems(text) == ()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_one_message_per_cause_and_its_fix_cleans_the_spec(case: Case) -> None:
    text = mutate(case)
    problems = _problems(text)
    rendered = "".join(problem.render("spec.toml") + "\n" for problem in problems)
    expected = EXPECTED / f"{case.name}.txt"
    if UPDATE:
        expected.write_text(rendered, encoding="utf-8")
    assert rendered == expected.read_text(encoding="utf-8")
    edits = [edit for problem in problems for edit in problem.fix]
    if edits and case.clean:
        assert _problems(apply(text, edits)) == ()
