# The README's two commands: `make run` and `make test`. Both set everything up first.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bootstrapped
export QT_API := pyside6

.PHONY: run test lint bench package package-test clean setup catalogues

$(STAMP): pyproject.toml requirements/constraints.txt scripts/bootstrap.sh
	bash scripts/bootstrap.sh
	touch $(STAMP)

setup: $(STAMP) catalogues

# The translations, compiled when their .ts/.po is newer (resources/i18n; scripts/i18n.py)
catalogues: $(STAMP)
	$(BIN)/python scripts/i18n.py compile

run: $(STAMP) catalogues
	$(BIN)/custodia

lint: $(STAMP)
	$(BIN)/ruff check backends desktop tests bench
	$(BIN)/ruff format --check backends desktop tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint catalogues
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m bench

package: $(STAMP) catalogues
	$(BIN)/python -m pip install -q -c requirements/constraints.txt -e ".[package]"
	$(BIN)/pyinstaller --noconfirm --clean packaging/custodia.spec
	du -sh dist/custodia

# The bundle's self-test with no Python, no inherited environment and (where user namespaces
# allow it) no network at all: a private network namespace with nothing in it.
NO_NETWORK := $(shell unshare -rn true 2>/dev/null && echo "unshare -rn")
package-test:
	@test -x dist/custodia/custodia || $(MAKE) package
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	echo "self-test of dist/custodia (env -i$(if $(NO_NETWORK), + no network,))" && \
	$(NO_NETWORK) env -i HOME="$${HOME:-$$tmp}" CUSTODIA_HOME="$$tmp/data" \
		QT_QPA_PLATFORM=offscreen LANG=C.UTF-8 dist/custodia/custodia --self-test

clean:
	rm -rf build dist .mypy_cache .ruff_cache
