# syntax=docker/dockerfile:1
#
# One image for the four services of the Dominos cluster (and the web client's files). The
# service is chosen by the argument of `python -m`: `services.table`, `services.timer`,
# `services.bots` or `services.gateway` (the default). The Kubernetes manifests in
# deploy/k8s/ set it per Deployment.
#
#   docker build -t dominos-cluster:0.2.0 .
#   docker run --rm -p 50051:50051 -p 9100:9100 dominos-cluster:0.2.0 services.table
#
# Base image: a fixed CPython patch release on a fixed Debian release, the same in both
# stages (the virtual environment's `python` is a symlink into the base image). To pin it
# immutably, resolve the tag's digest and append it to both FROM lines, e.g.
#   docker buildx imagetools inspect python:3.11.7-slim-bookworm --format '{{json .Manifest.Digest}}'
#   FROM python:3.11.7-slim-bookworm@sha256:<that digest> AS builder
# and let Renovate or Dependabot (docker ecosystem) keep tag and digest current.

# The browser client (clients/web), built into static files that the gateway's web edge
# serves (DOMINOS_WEB_ROOT=/app/clients/web/dist in the manifests). buf and the code
# generator come from its npm devDependencies; nothing of Node reaches the runtime image.
FROM node:20.20.2-bookworm-slim AS web

WORKDIR /src/clients/web
COPY protos/ /src/protos/
COPY clients/web/package.json clients/web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY clients/web/ ./
RUN npm run build

FROM python:3.11.7-slim-bookworm AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
# The build runs setup.py, which generates the gRPC stubs from protos/ with tools/gen_protos.py
# (grpcio-tools and mypy-protobuf come from the build-system requirements of pyproject.toml).
COPY pyproject.toml setup.py README.md ./
COPY tools/ tools/
COPY protos/ protos/
COPY services/ services/
RUN pip install --upgrade "pip>=24" \
 && pip install . \
 && python -c "import dominos.v1.gateway_pb2_grpc, services.table.__main__, services.timer.__main__, services.gateway.__main__"

FROM python:3.11.7-slim-bookworm AS runtime

LABEL org.opencontainers.image.title="dominos-cluster" \
      org.opencontainers.image.description="Dominos cluster: table service, timer service and gateway"

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# A fixed, unprivileged uid/gid (10001) that the Kubernetes securityContext also names.
RUN groupadd --system --gid 10001 dominos \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin dominos

COPY --from=builder /opt/venv /opt/venv
COPY --from=web /src/clients/web/dist /app/clients/web/dist

USER 10001:10001
WORKDIR /app

# gRPC (DOMINOS_GRPC_PORT) and Prometheus /metrics (DOMINOS_METRICS_PORT), their defaults;
# the gateway's web edge (DOMINOS_WEB_PORT, off by default, 8080 in the manifests).
EXPOSE 50051 9100 8080

ENTRYPOINT ["python", "-m"]
CMD ["services.gateway"]
