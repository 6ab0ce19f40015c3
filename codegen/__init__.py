"""keygraph codegen: compiles an access-pattern spec (TOML) into the `generated` package.

Pipeline (each step pure, returning data): loader (tomllib, then pydantic models of the spec
in spec.py; unknown keys rejected) -> resolve (attributes_from followed, templates parsed) ->
checks (names, references, types allowed in keys) -> lint (key design) -> lower (IR: every
name, type and expression decided) -> render (Jinja, StrictUndefined) -> formatter (ruff)
-> a {path: text} map. Only output.py touches the output directory. Errors carry the TOML
path and line, all at once (diagnostics.py).

The spec language (see access_patterns.toml for a full example):

- [table]: name, partition_key, sort_key, ttl_attribute, point_in_time_recovery, tenancy
  ("tenant", the default: every partition key holds {tenant}; or "global"), stream
  (KEYS_ONLY | NEW_IMAGE | OLD_IMAGE | NEW_AND_OLD_IMAGES: the table's change stream and
  what its records hold, read through keygraph.streams on both stores);
  [table.indexes.<NAME>]: partition_key, sort_key, projection (ALL | KEYS_ONLY | INCLUDE) and
  include. A query on a KEYS_ONLY or INCLUDE index returns a generated summary model of what
  the index holds of each entity (<Entity><Index>Summary: the attributes its keys carry,
  parsed back out, and the included ones).
- [structs.<Name>]: description and one attribute table per field (nested in lists).
- [entities.<Name>]: type (the `_type` discriminator), tenancy (overrides the table's: a
  "global" entity, such as a public catalog, has no {tenant} in its keys and its functions
  take no tenant), attributes.<name> = { type = id | string | int | float | bool | datetime
  | date | enum | path | list | struct, optional, and per type: min_length, max_length,
  pattern / ge, le, width / values / of (a struct's struct; a list's struct, or id or
  string) / min_items, max_items; an id may narrow its max_length (128 characters) and
  pattern; a path takes max_items (its most parts) and max_length and pattern (each part's),
  and id_separator (one character joining its parts in the entity's global id) },
  attributes_from = "<Entity>" to share another entity's attributes, and
  keys.<ATTR> = "<template>" for the table's and each index's key attributes.
  [entities.<Name>.relations.<name>]: pattern, args = { <key argument> = "<attribute>" },
  description: a field of the entity's GraphQL type following the pattern from its item (a
  get's every key argument from its attributes; a batch_get's one from a list attribute
  with max_items; a query's others are the field's arguments); checked in
  relation_checks.py, answered batched by keygraph.api.
- Key templates: segments joined by "#"; each segment literal text or one {placeholder}
  naming tenant, an attribute, or a pattern arg. Values are escaped ("%" -> "%25",
  "#" -> "%23"), datetimes fixed-width UTC, ints zero-padded to `width`, paths escaped part by
  part, dates as ISO dates. A key naming an optional attribute is sparse: absent while the
  attribute is None. Lint holds every key template to DynamoDB's limits (partition keys
  2,048 bytes of UTF-8, sort keys 1,024) with the longest values its attributes allow: a
  character takes up to 4 bytes, 1 under a pattern of one ASCII character class without
  "#" and "%" (^[0-9A-Za-z]+$); a string or path in a key needs its bounds. The builders
  measure every key they make and refuse a longer one (KeyTooLong) before any store call.
  A pattern's template may write one of an enum's values where its entities' key has that
  enum's placeholder (STATUS#OPEN over STATUS#{status}): the query reads that value, and
  takes no argument for it.
- [patterns.<name>]: operation get | batch_get (entity = "<Entity>") or query (index,
  partition template, sort = { eq | begins_with | between = [low, high] | lt | le | gt | ge
  | collection }, where collection = "<template>" reads the item keyed there and every item
  keyed below it at a delimiter (an order and its ORDER#...#ITEM#n lines) in one Query,
  args.<name> = { type, width, prefix_of = "<attribute>" }, direction ascending | descending,
  returns = [entities], page_size = { default, max }, 20 and 100 when left out). Lint
  requires every query to be served by the keys of the entities it returns, and no other
  entity's items to be within its reach (ORDER#... beside ORDERLINE#...: a begins_with
  ending at '#' cannot reach the other, a range can). Every problem is reported in one run,
  the shape's with the rest's.
- Write sharding: shards = { placeholder = "shard", count = 10 } on a query whose partition
  holds {shard}: the entities store the shard as an int attribute (width set, 0..count-1,
  chosen by the writer); the generated function queries every shard concurrently and merges
  the pages by sort key in the pattern's direction (ties by table key).
- Authorization (rules.py, authz.py): [authorization] roles = [...] (the roles rules may
  name) and [authorization.rules] <name> = "<rule>" (named rules, used by name) turn it on.
  Then every entity needs access.read | create | update | delete (access.default for those
  not named) and may give attributes a read rule of their own (access.attributes.<name>),
  and every pattern needs allow = "<rule>": deny by default, a missing rule is an error. A
  rule combines with and / or / not and parentheses: role = "R"; owner = "<attribute>" (the
  attribute, an id or string, equals the caller's sub); claim.<name> = "V" or != "V" (a
  token without the claim satisfies neither); anyone; nobody; a named rule. A pattern's
  owner must be an argument its key binds (else only a filter after the read could enforce
  it: bind the owner in the key, or restrict the pattern to roles), and a pattern's rule
  must imply the read rule of each entity it returns (implication.py). Codegen writes each
  rule as a pure guard function in authz.py (may_<operation>_<entity>,
  may_read_<entity>_<attribute>, may_run_<pattern>: the caller, and the owner attributes as
  keyword arguments), which each generated query function asks with the session's caller
  and its arguments before any store call (raising keygraph.errors.Forbidden; a session
  without a caller is not asked about), a "who may" column in ACCESS_PATTERNS.md, and
  AUTHORIZATION.md.

Besides the package, codegen writes the table as CreateTable JSON, CloudFormation, a
Terraform aws_dynamodb_table (table.tf.json) and a NoSQL Workbench model, and the registry
of entities table migrations read (entities.py).
"""
