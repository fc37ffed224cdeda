# The README's two commands: `make run` and `make test`. Both set everything up first.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bootstrapped
export QT_API := pyside6

.PHONY: run test lint bench package clean setup

$(STAMP): pyproject.toml requirements/constraints.txt scripts/bootstrap.sh
	bash scripts/bootstrap.sh
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/custodia

lint: $(STAMP)
	$(BIN)/ruff check backends desktop tests bench
	$(BIN)/ruff format --check backends desktop tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m bench

package: $(STAMP)
	$(BIN)/python -m pip install -q -c requirements/constraints.txt -e ".[package]"
	$(BIN)/pyinstaller --noconfirm --clean packaging/custodia.spec

clean:
	rm -rf build dist .mypy_cache .ruff_cache
