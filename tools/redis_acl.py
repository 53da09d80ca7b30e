"""Print the ACL file of a Redis Cluster deployment (``deploy/README.md`` "Redis Cluster").

The passwords come from the environment: ``REDIS_CHART_PASSWORD`` (the chart's own, for its
probes, cluster creation and replication) and ``REDIS_PASSWORD_<IDENTITY>`` for ``table``,
``timer``, ``gateway``, ``bots`` and ``admin``. The file holds their SHA-256 only, never a
password::

    REDIS_CHART_PASSWORD=... REDIS_PASSWORD_TABLE=... ... python tools/redis_acl.py > users.acl
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from services.common.cluster_auth.redis import chart_acl_file
from services.common.cluster_auth.secrets import IDENTITIES


def render(env: Mapping[str, str]) -> str:
    """The ACL file for the passwords in ``env`` (``KeyError`` names a missing one)."""
    names = ["REDIS_CHART_PASSWORD", *(f"REDIS_PASSWORD_{i.upper()}" for i in IDENTITIES)]
    missing = [name for name in names if not env.get(name)]
    if missing:
        raise KeyError(", ".join(missing))
    passwords = {identity: env[f"REDIS_PASSWORD_{identity.upper()}"] for identity in IDENTITIES}
    return chart_acl_file(passwords, env["REDIS_CHART_PASSWORD"])


def main() -> int:
    try:
        sys.stdout.write(render(os.environ))
    except KeyError as missing:
        sys.stderr.write(f"set {missing.args[0]}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
