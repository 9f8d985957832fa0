# Two commands do all set-up: `make run` serves the lab, `make test` runs every check.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
# make run PORT=8080 serves the lab on another loopback port.
PORT ?= 8000

.PHONY: run test test-fast test-voice lint typecheck install db browser redis bench bench-scale bench-side-by-side bench-voice clean cluster install-postgres test-scaled test-agents

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# pipecat-ai only for the smart-turn v3.2 end-of-turn model file it ships (BSD-2-Clause): the
# lab never imports pipecat, so none of its dependencies are installed.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps pipecat-ai==1.14.0
	touch $(STAMP)

install: $(STAMP)

PG_STAMP := $(VENV)/.installed-postgres
$(PG_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,postgres]'
	touch $(PG_STAMP)

install-postgres: $(PG_STAMP)

# The README's headless commands use the lab's own database, so both commands prepare it.
db: install
	$(BIN)/python manage.py migrate --noinput

$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

browser: $(CHROMIUM)

# Before serving, record what the sandbox holds for any commit a crash left without an outcome.
run: db
	$(BIN)/python manage.py reconcileruns
	$(BIN)/python manage.py seeddemo $(if $(NEW_DEMO_PASSWORD),--new-password)
	@# The alert worker runs beside daphne and stops with it (Ctrl-C, exit or the shell's death).
	$(BIN)/python manage.py runalerts --exit-with-parent & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT; trap 'exit 130' INT TERM; \
	$(BIN)/daphne -b 127.0.0.1 -p $(PORT) lab.asgi:application

# The scaled-out topology on loopback: PostgreSQL and Redis from Debian (installed when missing),
# migrate, CLUSTER_WEB daphne processes behind nginx on CLUSTER_PORT, CLUSTER_SPEECH speech workers.
cluster: install-postgres
	$(BIN)/python -m lab.cluster

# The part of the suite that touches storage, sessions and the channel layer (without the
# model-heavy voice tests: make test runs those) on a throwaway PostgreSQL + Redis, then the
# multi-process tests (tests/cluster, with a real speech worker). .ci/run runs it after make test.
SCALED_TESTS ?= tests/events tests/runs tests/tools tests/audit tests/config tests/accounts \
	tests/web/test_consumer.py tests/web/test_live_sockets.py tests/web/test_lease_processes.py \
	tests/web/test_ownership.py tests/alerts/test_claims.py tests/connectors/test_mcp_relay.py
test-scaled: install-postgres
	$(BIN)/python -m lab.cluster backing -- sh -c '$(BIN)/python -m pytest -m "not browser and not models" $(SCALED_TESTS) && $(BIN)/python -m pytest tests/cluster'

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

# The suite on TEST_WORKERS pytest-xdist processes: most of its wall time is waiting (voice calls
# streamed in real time, browsers, servers starting), which the other process fills. Whole files
# go to one process (tests/web/test_voice_scenarios.py plays its runs once per process that has
# any of them); TEST_WORKERS=0 runs everything in this process.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The speech-worker tests start a real redis-server: Debian's, installed when missing (as root,
# like the browser).
redis: install
	$(BIN)/python -c 'from lab.cluster.packages import ensure; ensure("redis-server")'

test: db browser redis lint typecheck
	$(PYTEST)

# The iteration tier: every test but the real-model and browser ones (minutes, no Chromium).
test-fast: install
	$(PYTEST) -m "not models and not browser"

# The voice tier: the tests that load the real ASR/TTS models (a few of them drive Chromium).
test-voice: install browser redis
	$(PYTEST) -m models

# The pipecat pipeline that bench_side_by_side runs beside the lab lives in its own venv.
PIPECAT_VENV := benchmarks/.pipecat-venv
PIPECAT_STAMP := $(PIPECAT_VENV)/.installed
$(PIPECAT_STAMP): benchmarks/pipecat_side/requirements.txt
	$(PY) -m venv $(PIPECAT_VENV)
	$(PIPECAT_VENV)/bin/pip install --quiet --upgrade pip
	$(PIPECAT_VENV)/bin/pip install --quiet -r benchmarks/pipecat_side/requirements.txt
	touch $(PIPECAT_STAMP)

bench: install-postgres $(PIPECAT_STAMP)
	for b in gate evaluator asr voice reports grader understanding commit_load side_by_side scale audit; do $(BIN)/python -m benchmarks.bench_$$b || exit 1; done

# The two benchmarks that need more than make test installs, each with its own set-up.
bench-scale: install-postgres
	$(BIN)/python -m benchmarks.bench_scale

# The outside-agent connectors end to end: the reference pipecat bot needs the pipecat venv, which
# `make test` does not build (its tests skip there without it).
test-agents: install $(PIPECAT_STAMP)
	$(BIN)/python -m pytest -m pipecat tests/connectors

bench-side-by-side: install $(PIPECAT_STAMP)
	$(BIN)/python -m benchmarks.bench_side_by_side

# Issue 28's voice figures from one command: the side by side with pipecat (17 caller lines,
# clean, noisy, and clean beside a busy core), then 1, 4, 8 and 16 simultaneous calls, then the
# words per encoder window over every spoken corpus; each ends with its aims, met or missed.
# SIDE_BY_SIDE=--quick plays the correction scenario's 3 lines only (a busy machine).
SIDE_BY_SIDE ?=
bench-voice: install $(PIPECAT_STAMP)
	$(BIN)/python -m benchmarks.bench_side_by_side $(SIDE_BY_SIDE)
	$(BIN)/python -m benchmarks.bench_voice --calls 1,4,8,16
	$(BIN)/python -m benchmarks.bench_asr_corpora

clean:
	rm -rf $(VENV) $(PIPECAT_VENV) .pytest_cache .hypothesis .mypy_cache
