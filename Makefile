# The few entry points a person types. `make run` and `make test` do all set-up themselves.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HTMX_VERSION := 2.0.11
AXE_VERSION := 4.14.1
PG_URL ?= postgres://postgres@127.0.0.1:5432/governance
STAMP := $(VENV)/.installed

.PHONY: install chromium contract-prism run test test-sqlite test-postgres test-prism test-inspector test-bodies test-browser bench faults worker lint format vendor-htmx vendor-axe check-deploy clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# Links in e-mails point at the port served unless SITE_URL says otherwise; the demo's e-mails
# are written to files under mail/ (EMAIL_URL picks another backend), not to the console.
run: install
	$(PY) manage.py migrate --noinput
	SITE_URL=$${SITE_URL:-http://127.0.0.1:$(PORT)} $(PY) manage.py seed_demo
	@echo ""
	@echo "== Open http://127.0.0.1:$(PORT)/ and sign in as lena (Project Lead), sofia (sponsor) or"
	@echo "== any of the demo cast in the README, password governance-demo. Ctrl-C stops it. =="
	@echo ""
	SITE_URL=$${SITE_URL:-http://127.0.0.1:$(PORT)} $(PY) manage.py runserver 127.0.0.1:$(PORT)

# The browser tests drive a Chromium or Chrome found on this machine (CHROMIUM_PATH, PATH, the
# usual locations); as root, Debian's `chromium` is installed when none is. Otherwise the
# run stops here, before anything else, with one line saying what to install.
chromium:
	@$(PYTHON) tools/chromium.py ensure >/dev/null

# The whole suite on SQLite, then on PostgreSQL when it answers at PG_URL the tests that reach
# the database (the others ran already, and no database changes them; record 0304), then the
# backends against the Prism mocks and the MCP Inspector CLI when npm is there. The pinned npm
# packages are installed first when npm is there (tests/test_typescript_client.py compiles a
# TypeScript client typed from the API's document; it is skipped without them).
test: chromium install
	@if command -v $(NPM) >/dev/null 2>&1; then $(MAKE) --no-print-directory $(PRISM); fi
	$(MAKE) --no-print-directory test-sqlite
	$(MAKE) --no-print-directory test-postgres PG_SELECT=--database-tests-only
	$(MAKE) --no-print-directory test-prism
	$(MAKE) --no-print-directory test-inspector

test-sqlite: chromium install
	@echo "== tests on SQLite =="
	env -u DATABASE_URL $(PY) -m pytest -q -n 2 $(PYTEST_ARGS)

test-postgres: chromium install
	@if $(PY) -c "import psycopg,sys; psycopg.connect('$(PG_URL)'.rsplit('/',1)[0]+'/postgres', connect_timeout=3).close()" 2>/dev/null; then \
		echo "== tests on PostgreSQL ($(PG_URL)) =="; \
		DATABASE_URL=$(PG_URL) $(PY) -m pytest -q -n 2 $(PG_SELECT) $(PYTEST_ARGS); \
	elif [ -n "$$REQUIRE_POSTGRES" ]; then \
		echo "== FAILED: PostgreSQL is not reachable at $(PG_URL) and REQUIRE_POSTGRES is set =="; exit 1; \
	else \
		echo "== SKIPPED: PostgreSQL is not reachable at $(PG_URL); the suite ran on SQLite only =="; \
	fi

# The backends against Atlassian's OpenAPI documents served by Prism with request validation
# (pinned in package.json and package-lock.json, installed with the machine's npm when
# node_modules is older than they are): tools/prism.py starts the three mocks, waits until they
# answer, runs the `prism`-marked tests and stops the mocks, also on failure or Ctrl-C.
PRISM := node_modules/.bin/prism
PRISM_PORT ?= 4010
NPM ?= npm
$(PRISM): package.json package-lock.json
	SCARF_ANALYTICS=false $(NPM) install --no-audit --no-fund --ignore-scripts
	touch $(PRISM)

contract-prism: install $(PRISM)
	@echo "== the Jira and Confluence backends against the Prism mocks (ports $(PRISM_PORT)..$$(($(PRISM_PORT)+2))) =="
	env -u DATABASE_URL $(PY) tools/prism.py --port $(PRISM_PORT) -- \
		$(PY) -m pytest -q -p no:randomly -m prism tests/atlassian

# `make test`'s last step: the Prism run, or one line saying why it was skipped (npm missing);
# with REQUIRE_PRISM set (CI) a skip is a failure.
test-prism:
	@if command -v $(NPM) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory contract-prism; \
	elif [ -n "$$REQUIRE_PRISM" ]; then \
		echo "== FAILED: npm is not installed and REQUIRE_PRISM is set: the Prism contract run needs it =="; exit 1; \
	else \
		echo "== SKIPPED: the Prism contract run (make contract-prism): npm is not installed =="; \
	fi

# The official MCP Inspector's CLI (npm, pinned) against the app under runserver on a free
# loopback port with its own database (tools/inspector.py): tools listed and called with a
# personal token, the gate's refusal shown in the app's words. Skipped with one line when npm
# is not there; with REQUIRE_INSPECTOR set (CI) a skip is a failure.
INSPECTOR_VERSION ?= 2.12.0
test-inspector: install
	@if command -v npx >/dev/null 2>&1; then \
		echo "== the MCP Inspector CLI $(INSPECTOR_VERSION) against /mcp =="; \
		INSPECTOR_VERSION=$(INSPECTOR_VERSION) env -u DATABASE_URL $(PY) tools/inspector.py; \
	elif [ -n "$$REQUIRE_INSPECTOR" ]; then \
		echo "== FAILED: npm is not installed and REQUIRE_INSPECTOR is set: the Inspector run needs it =="; exit 1; \
	else \
		echo "== SKIPPED: the MCP Inspector CLI run (make test-inspector): npm is not installed =="; \
	fi

# The request bodies of the registers, the business case and the status against the OpenAPI
# document with schemathesis's positive and negative data (tests/hardening/
# test_bodies_schemathesis.py): a few minutes, so not part of `make test`.
# BODIES_MAX_EXAMPLES (default 25) sets the examples per operation.
test-bodies: install
	BODIES_SCHEMATHESIS=1 env -u DATABASE_URL $(PY) -m pytest -q -n 0 -p no:randomly \
		tests/hardening/test_bodies_schemathesis.py $(PYTEST_ARGS)

BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet ".[dev,bench]"
	touch $(BENCH_STAMP)

# The benchmarks, with production settings; the load run needs PostgreSQL (see bench/).
# PROJECTS and ROWS (comma-separated sizes, e.g. `make bench PROJECTS=1000,5000,10000
# ROWS=1000,10000`) set the sizes measured; each figure is reported against its target.
bench: $(BENCH_STAMP)
	$(PY) bench/run.py

# The fault run (tools/faults.py): its own PostgreSQL and Redis on free loopback ports,
# gunicorn on the app, reads and writes under load while each server is stopped and started
# again and a worker is SIGKILLed; fails on a lost or a stored refused write, a 500 or a
# recovery over 2 s. Needs PostgreSQL's server tools (initdb, pg_ctl) and redis-server.
faults: install
	$(PY) tools/faults.py

worker: install
	$(PY) manage.py outbox_worker

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m mypy

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# htmx comes from the npm package, pinned, copied with its version in the file name and
# committed; pages never load it from a CDN.
vendor-htmx:
	rm -rf .vendor-tmp && mkdir -p .vendor-tmp static/vendor
	cd .vendor-tmp && npm pack --silent htmx.org@$(HTMX_VERSION) >/dev/null && tar xzf htmx.org-$(HTMX_VERSION).tgz
	cp .vendor-tmp/package/dist/htmx.min.js static/vendor/htmx-$(HTMX_VERSION).min.js
	cp .vendor-tmp/package/LICENSE static/vendor/htmx-LICENSE.txt
	rm -rf .vendor-tmp

# axe-core, for the browser tests only (never served to a page): same way, under tests/.
vendor-axe:
	rm -rf .vendor-tmp && mkdir -p .vendor-tmp tests/browser/vendor
	cd .vendor-tmp && npm pack --silent axe-core@$(AXE_VERSION) >/dev/null && tar xzf axe-core-$(AXE_VERSION).tgz
	cp .vendor-tmp/package/axe.min.js tests/browser/vendor/axe-$(AXE_VERSION).min.js
	cp .vendor-tmp/package/LICENSE tests/browser/vendor/axe-LICENSE.txt
	rm -rf .vendor-tmp

clean:
	rm -rf $(VENV) staticfiles
