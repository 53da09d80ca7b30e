"""A real Prometheus (Debian's ``prometheus``) and the exporters the deployment scrapes
besides the services (``prometheus-redis-exporter``, ``prometheus-blackbox-exporter``), run
as child processes on free ports, for the live operations test (``make test-ops``).

:class:`Prometheus` scrapes what it is given as :class:`ScrapeJob`\\ s every second, evaluates
the shipped rule files every second, and answers PromQL over HTTP (:meth:`Prometheus.query`,
:meth:`Prometheus.alerts`). Targets carry the labels the Kubernetes ServiceMonitors give them
(``namespace``, ``job``, ``pod``), so the alerts and the dashboard's queries run unchanged.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testing.servers import ManagedServer, find_binary

__all__ = [
    "BlackboxExporter",
    "Prometheus",
    "RedisExporter",
    "ScrapeJob",
    "Target",
]

#: Seconds between scrapes and between rule evaluations (the production default is 15 s and
#: 1 m; a test needs samples quickly).
INTERVAL_S = 1


def _get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def _http_ok(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Target:
    """One scrape target: ``host:port`` and the labels a ServiceMonitor would give it."""

    address: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ScrapeJob:
    """A scrape job: its name (``job`` label), targets, and optional path and parameters
    (a blackbox probe: ``/probe?module=...&target=...``)."""

    name: str
    targets: Sequence[Target]
    metrics_path: str = "/metrics"
    params: Mapping[str, Sequence[str]] = field(default_factory=dict)

    #: ``relabel_configs`` of the job (a probe's: the target becomes a parameter).
    relabel: Sequence[Mapping[str, Any]] = ()

    @classmethod
    def probe(cls, name: str, exporter: str, module: str, target: str, namespace: str) -> ScrapeJob:
        """A blackbox probe job: ``exporter`` (``host:port``) probes ``target`` with
        ``module``; ``instance`` is the target, as the Prometheus Operator's Probe sets it."""
        return cls(
            name,
            [Target(target, {"namespace": namespace})],
            metrics_path="/probe",
            params={"module": [module]},
            relabel=(
                {"source_labels": ["__address__"], "target_label": "__param_target"},
                {"source_labels": ["__param_target"], "target_label": "instance"},
                {"target_label": "__address__", "replacement": exporter},
            ),
        )

    def config(self) -> dict[str, Any]:
        """The job's ``scrape_configs`` entry."""
        job: dict[str, Any] = {
            "job_name": self.name,
            "scrape_interval": f"{INTERVAL_S}s",
            "scrape_timeout": f"{INTERVAL_S}s",
            "metrics_path": self.metrics_path,
            "static_configs": [
                {"targets": [t.address], "labels": dict(t.labels)} for t in self.targets
            ],
        }
        if self.params:
            job["params"] = {k: list(v) for k, v in self.params.items()}
        if self.relabel:
            job["relabel_configs"] = [dict(rule) for rule in self.relabel]
        return job


class Prometheus(ManagedServer):
    """``prometheus`` with the given scrape jobs and rule files, its TSDB in the data dir."""

    name = "prometheus"

    def __init__(
        self,
        jobs: Sequence[ScrapeJob],
        rule_files: Sequence[Path] = (),
        *,
        binary: str | None = None,
    ) -> None:
        super().__init__(binary=find_binary("prometheus", binary))
        self.jobs = tuple(jobs)
        self.rule_files = tuple(rule_files)
        self.config_path = self.data_dir / "prometheus.yml"
        self.write_config()

    def write_config(self) -> None:
        """Write the configuration (the jobs may be changed and :meth:`reload` ed)."""
        config = {
            "global": {
                "scrape_interval": f"{INTERVAL_S}s",
                "evaluation_interval": f"{INTERVAL_S}s",
            },
            "rule_files": [str(path) for path in self.rule_files],
            "scrape_configs": [job.config() for job in self.jobs],
        }
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    def command(self) -> list[str]:
        return [
            self.binary,
            f"--config.file={self.config_path}",
            f"--storage.tsdb.path={self.data_dir / 'tsdb'}",
            f"--web.listen-address={self.host}:{self.port}",
            "--web.enable-lifecycle",
            "--log.level=warn",
            *self.extra_args,
        ]

    def probe(self, timeout: float) -> bool:
        return _http_ok(f"{self.url}/-/ready", timeout)

    # -- the HTTP API ---------------------------------------------------------------------

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>?params``'s ``data``; raises on an error status."""
        query = urllib.parse.urlencode(params)
        answer = _get_json(f"{self.url}/api/v1/{path}?{query}")
        if answer.get("status") != "success":
            raise AssertionError(f"Prometheus {path} failed: {answer}")
        return answer["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector (or ``[[ts, value]]`` for a scalar)."""
        data = self.api("query", query=expr)
        result = data["result"]
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": result}]
        return list(result)

    def alerts(self) -> list[dict[str, Any]]:
        """The alerts pending or firing now (``labels``, ``state``, ``activeAt``)."""
        return list(self.api("alerts")["alerts"])

    def targets(self) -> list[dict[str, Any]]:
        """The active scrape targets with their ``health``."""
        return list(self.api("targets")["activeTargets"])

    def rule_groups(self) -> list[dict[str, Any]]:
        """The loaded rule groups (``name``, ``rules`` with ``name``, ``health``)."""
        return list(self.api("rules")["groups"])


class _Exporter(ManagedServer):
    """An exporter: ready once its ``/metrics`` page answers."""

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``host:port`` (what Prometheus scrapes)."""
        return f"{self.host}:{self.port}"

    def probe(self, timeout: float) -> bool:
        return _http_ok(f"{self.url}/metrics", timeout)


class RedisExporter(_Exporter):
    """``prometheus-redis-exporter`` of one Redis, as the Redis chart runs it (``redis_*``)."""

    name = "redis-exporter"

    def __init__(
        self, redis_address: str, user: str, password: str, *, binary: str | None = None
    ) -> None:
        super().__init__(binary=find_binary("prometheus-redis-exporter", binary))
        self.redis_address = redis_address
        self.user = user
        self.password = password

    def command(self) -> list[str]:
        return [
            self.binary,
            f"-redis.addr=redis://{self.redis_address}",
            f"-redis.user={self.user}",
            f"-redis.password={self.password}",
            f"-web.listen-address={self.host}:{self.port}",
        ]


class BlackboxExporter(_Exporter):
    """``prometheus-blackbox-exporter`` with a module file (``/probe?module=&target=``)."""

    name = "blackbox-exporter"

    def __init__(self, config: Path, *, binary: str | None = None) -> None:
        super().__init__(binary=find_binary("prometheus-blackbox-exporter", binary))
        self.config = config

    def command(self) -> list[str]:
        return [
            self.binary,
            f"--config.file={self.config}",
            f"--web.listen-address={self.host}:{self.port}",
        ]
