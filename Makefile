# Both targets create the environment when it is missing, so they work on a fresh clone.
PYTHON ?= python3
# pytest-xdist: one worker per core; each test file runs on one worker, so its module fixtures are built once
TEST_WORKERS ?= auto
VENV ?= .venv
BIN = $(VENV)/bin
STAMP = $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

# `test` ends by rerunning the tests marked `numbers` as on the other kind of CPU: MBERTLAB_CPU_BF16 forces the
# answer to "does this CPU have native bf16?", which decides `precision: auto` (docs/reliability.md)
.PHONY: demo test env

env: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mbertlab study run quick

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25 $(PYTEST_ARGS)
	other=$$(env -u MBERTLAB_CPU_BF16 $(BIN)/python -c 'from mbertlab.runtime import bf16_supported as b; \
	print(int(not b()))') && MBERTLAB_CPU_BF16=$$other $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m numbers
