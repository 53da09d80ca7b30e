"""The secrets of one cluster and the environment each service is started with.

Identities: ``table``, ``timer``, ``gateway`` and ``bots`` (one per service) and ``admin``
(operators' tools and the tests' own assertions: every right, never given to a service).
Each has its own NATS password and Redis password; the user name is the identity. The
seat-token secret goes to the table service only; the gateway and the bots service prove
themselves to the table service with caller credentials ``gateway.<secret>`` and
``bots.<secret>`` that the table service accepts.

Production keeps these in Kubernetes Secrets (see ``deploy/``); ``make run`` keeps them in
``.run/secrets.json`` (mode 0600, generated on first start); each test cluster generates its
own, so the local run and the tests authenticate exactly as production does.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: The services' identities.
SERVICES: Final = ("table", "timer", "gateway", "bots")
#: The operators' identity (tools, tests' assertions): every right, no service runs as it.
ADMIN: Final = "admin"
IDENTITIES: Final = (*SERVICES, ADMIN)


def _new_secret() -> str:
    return secrets.token_hex(24)


def _per_identity() -> dict[str, str]:
    return {identity: _new_secret() for identity in IDENTITIES}


@dataclass(frozen=True)
class ClusterSecrets:
    """Every secret of one cluster."""

    #: Key seat tokens are derived from (table service only).
    token_secret: str = field(default_factory=_new_secret)
    #: NATS password per identity.
    nats_passwords: Mapping[str, str] = field(default_factory=_per_identity)
    #: Redis password per identity.
    redis_passwords: Mapping[str, str] = field(default_factory=_per_identity)
    #: The secret half of the gateway's credential towards the table service.
    gateway_caller_secret: str = field(default_factory=_new_secret)
    #: The secret half of the bots service's credential towards the table service.
    bots_caller_secret: str = field(default_factory=_new_secret)

    @property
    def gateway_credential(self) -> str:
        """What the gateway sends to the table service (``<caller>.<secret>``)."""
        return f"gateway.{self.gateway_caller_secret}"

    @property
    def bots_credential(self) -> str:
        """What the bots service sends to the table service (``<caller>.<secret>``)."""
        return f"bots.{self.bots_caller_secret}"

    def to_json(self) -> str:
        """The secrets as JSON (for a file only its owner may read)."""
        return json.dumps(
            {
                "token_secret": self.token_secret,
                "nats_passwords": dict(self.nats_passwords),
                "redis_passwords": dict(self.redis_passwords),
                "gateway_caller_secret": self.gateway_caller_secret,
                "bots_caller_secret": self.bots_caller_secret,
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> ClusterSecrets:
        """Secrets saved by :meth:`to_json`; missing identities get new secrets."""
        data = json.loads(text)
        return cls(
            token_secret=str(data["token_secret"]),
            nats_passwords={**_per_identity(), **data.get("nats_passwords", {})},
            redis_passwords={**_per_identity(), **data.get("redis_passwords", {})},
            gateway_caller_secret=str(data["gateway_caller_secret"]),
            bots_caller_secret=str(data.get("bots_caller_secret") or _new_secret()),
        )

    @classmethod
    def load_or_create(cls, path: Path) -> ClusterSecrets:
        """The secrets in ``path``; a new set written there (mode 0600) when absent."""
        if path.exists():
            return cls.from_json(path.read_text())
        created = cls()
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(created.to_json())
        return created

    # -- what each identity connects with ------------------------------------------------

    def redis_url(self, identity: str, address: str, *, scheme: str = "redis") -> str:
        """The Redis URL of ``identity`` at ``address`` (``host:port``), database 0."""
        return f"{scheme}://{identity}:{self.redis_passwords[identity]}@{address}/0"

    def nats_url(self, identity: str, address: str, *, scheme: str = "nats") -> str:
        """The NATS URL of ``identity`` at ``address`` (``host:port``)."""
        return f"{scheme}://{identity}:{self.nats_passwords[identity]}@{address}"

    def service_env(
        self,
        service: str,
        *,
        redis: str,
        nats: str,
        redis_scheme: str = "redis",
        nats_scheme: str = "nats",
    ) -> dict[str, str]:
        """The ``DOMINOS_*`` variables that give ``service`` its identity: its Redis and NATS
        URLs, and the token secret (table) or caller credential (gateway)."""
        return {
            "DOMINOS_REDIS_URL": self.redis_url(service, redis, scheme=redis_scheme),
            "DOMINOS_NATS_URL": self.nats_url(service, nats, scheme=nats_scheme),
            **self.secret_env(service),
        }

    def secret_env(self, service: str) -> dict[str, str]:
        """The secrets ``service`` holds besides its connections: the token secret and the
        callers it accepts (table), the credential it presents (gateway, bots)."""
        if service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        if service == "table":
            return {
                "DOMINOS_TOKEN_SECRET": self.token_secret,
                "DOMINOS_TABLE_CALLERS": f"{self.gateway_credential},{self.bots_credential}",
            }
        if service == "gateway":
            return {"DOMINOS_CALLER_CREDENTIAL": self.gateway_credential}
        if service == "bots":
            return {"DOMINOS_CALLER_CREDENTIAL": self.bots_credential}
        return {}
