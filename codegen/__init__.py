"""keygraph codegen: compiles an access-pattern spec (TOML) into the `generated` package.

Pipeline (each step pure, returning data): loader (tomllib, then pydantic models of the spec
in spec.py; unknown keys rejected) -> resolve (attributes_from followed, templates parsed) ->
checks (names, references, types allowed in keys) -> lint (key design) -> lower (IR: every
name, type and expression decided) -> render (Jinja, StrictUndefined) -> formatter (ruff)
-> a {path: text} map. Only output.py touches the output directory. Errors carry the TOML
path and line, all at once (diagnostics.py).

The spec language (see access_patterns.toml for a full example):

- [table]: name, partition_key, sort_key, ttl_attribute; [table.indexes.<NAME>]:
  partition_key, sort_key, projection (ALL | KEYS_ONLY | INCLUDE) and include.
- [structs.<Name>]: description and one attribute table per field (nested in lists).
- [entities.<Name>]: type (the `_type` discriminator), attributes.<name> = { type = id |
  string | int | float | bool | datetime | enum | path | list, optional, and per type:
  min_length, max_length, pattern / ge, le, width / values / of, min_items, max_items },
  attributes_from = "<Entity>" to share another entity's attributes, and keys.<ATTR> =
  "<template>" for the table's and each index's key attributes.
- Key templates: segments joined by "#"; each segment literal text or one {placeholder}
  naming tenant, an attribute, or a pattern arg. Values are escaped ("%" -> "%25",
  "#" -> "%23"), datetimes fixed-width UTC, ints zero-padded to `width`, paths escaped part by
  part. A key naming an optional attribute is sparse: absent while the attribute is None.
- [patterns.<name>]: operation get | batch_get (entity = "<Entity>") or query (index,
  partition template, sort = { eq | begins_with | between = [low, high] | lt | le | gt | ge },
  args.<name> = { type, width, prefix_of = "<attribute>" }, direction ascending | descending,
  returns = [entities], page_size = { default, max }, 20 and 100 when left out). Lint
  requires every query to be served by the keys of the entities it returns, and no other
  entity's items to match it.
- Write sharding: shards = { placeholder = "shard", count = 10 } on a query whose partition
  holds {shard}: the entities store the shard as an int attribute (width set, 0..count-1,
  chosen by the writer); the generated function queries every shard concurrently and merges
  the pages by sort key in the pattern's direction (ties by table key).
"""
