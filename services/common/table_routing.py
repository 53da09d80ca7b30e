"""Table-affine calls to the table service (issue 22): every call about a table carries its
id in the ``dominos-table`` metadata, and the channel's load balancer (gRPC's ``ring_hash``,
hashing that header) sends a table's calls to one table-service replica while the set of
replicas stays the same. That replica's record cache then holds the table's last version, so
a move costs one Redis round trip instead of two.

Routing is an optimisation only: a replica that joins, leaves or dies moves some tables to
another one, whose first command over a stale cached record is refused by the commit's
compare-and-set and redone over the table read from Redis. Calls without a table (create,
join by code) go to a random replica. A replica that fails is skipped: its tables go to the
next replica on the ring until it is back.

gRPC core reads the request-hash header option only when the switch
:data:`RING_HASH_SWITCH` is on (gRFC A76, experimental in the C core):
:func:`enable_request_hash` turns it on for this process, before the first channel.
"""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping
from typing import Any, Final

from services.common.credentials import is_table_id

#: The metadata key that names a call's table.
TABLE_HEADER: Final = "dominos-table"
#: gRPC core's switch for ``ring_hash``'s ``requestHashHeader`` (gRFC A76).
RING_HASH_SWITCH: Final = "GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY"
#: The table channel's service config: consistent hashing on :data:`TABLE_HEADER`.
SERVICE_CONFIG: Final = json.dumps(
    {"loadBalancingConfig": [{"ring_hash_experimental": {"requestHashHeader": TABLE_HEADER}}]}
)


def enable_request_hash(environ: MutableMapping[str, str] | None = None) -> None:
    """Turn on gRPC core's request-hash header for ``ring_hash`` in this process (unless the
    operator set the switch): a process-wide switch of the gRPC library, not a setting."""
    (os.environ if environ is None else environ).setdefault(RING_HASH_SWITCH, "true")


def table_of(request: Any) -> str:
    """The table a table-service request is about: its ``table_id``, or that of the command
    it carries (``Execute``, ``RobotAct``); '' for a create, a join by code, and any id not of
    a table id's shape (a client's malformed id never becomes a header: gRPC refuses header
    values outside printable ASCII, and the table service answers such an id
    ``ID_MALFORMED`` from whichever replica gets it)."""
    table_id = getattr(request, "table_id", None)
    if not isinstance(table_id, str):
        which = request.WhichOneof("command") if hasattr(request, "WhichOneof") else None
        if which is None:
            return ""
        table_id = getattr(getattr(request, which), "table_id", "")
    return table_id if isinstance(table_id, str) and is_table_id(table_id) else ""
