"""NATS users and what each may publish and subscribe to, rendered as nats-server config.

Every connection authenticates (user name = identity, password from
:class:`~services.common.cluster_auth.secrets.ClusterSecrets`); there is no ``no_auth_user``,
so an anonymous client is refused. Each service may touch only the subjects its code uses:

- ``table`` publishes table events (``dominos.v1.table.>``, JetStream stream
  ``DOMINOS_TABLES``), creates both streams (it may start before the timer service), and
  consumes timer expiries through the durable queue consumer ``dominos-table`` on
  ``DOMINOS_TIMERS`` (binding it, acknowledging its messages).
- ``timer`` reads the clocks the table service announces (``dominos.v1.timer.clock``: ids and
  deadlines, no state; it never reads a table event, so never a hand), creates the
  ``DOMINOS_TIMERS`` stream and publishes expiries (``dominos.v1.timer.expired``).
- ``bots`` consumes robots' turns (``dominos.v1.robots.turn``: ids only) through the durable
  queue consumer ``dominos-bots`` on ``DOMINOS_ROBOTS`` (and creates that stream); it reads
  no table event, so it never sees a hand (issue 20). The table service publishes the turns.
- ``gateway`` only reads table events: it publishes nothing and uses no JetStream API, so
  it can neither forge an event nor replay the stream's history.
- ``admin`` (operators, the tests' assertions) may do everything.

JetStream is driven by request/reply: a stream or consumer call is a request published to
``$JS.API.<...>``, a JetStream publish is a request whose acknowledgement comes back on the
client's reply inbox, a push consumer delivers on its delivery subject and is acknowledged by
publishing to ``$JS.ACK.<stream>.<consumer>.>``. Each service's inboxes start with its own
prefix (``_INBOX.<identity>``, :func:`~services.common.bus.reply_inbox_prefix`, set by
:func:`~services.common.connections.connect_nats`), and each user may subscribe under its own
prefix only, and to its own work queue's delivery subject: no service receives another's
replies or deliveries (with one ``_INBOX.>`` for all, a compromised bots service could have
read the table service's acknowledgements and expiries). The subjects below are
the exact ones nats-py uses for the calls on the topology of :mod:`services.common.bus`
(the names come from there); a call outside them fails with a permissions violation
(``tests/integration/security/test_nats_permissions.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from services.common.bus import (
    CLOCK_SUBJECT,
    ROBOT_CONSUMER,
    ROBOT_STREAM,
    ROBOT_SUBJECT,
    TABLE_STREAM,
    TABLE_SUBJECTS,
    TIMER_CONSUMER,
    TIMER_STREAM,
    TIMER_SUBJECT,
    delivery_subject,
    reply_inbox_prefix,
)
from services.common.cluster_auth.secrets import ADMIN, IDENTITIES, ClusterSecrets

__all__ = [
    "ADMIN_PERMISSIONS",
    "PERMISSIONS",
    "Permissions",
    "TlsFiles",
    "nats_server_config",
]

_JS_API: Final = "$JS.API"


def _replies(identity: str) -> str:
    """Replies of the identity's own requests (JetStream API answers, publish
    acknowledgements): every inbox of a connection made with its prefix."""
    return f"{reply_inbox_prefix(identity)}.>"


def _create_or_update(stream: str) -> tuple[str, ...]:
    """``ensure_stream`` / ``ensure_timer_stream``: ``add_stream``, then ``update_stream``
    when the stream already exists with another configuration."""
    return (f"{_JS_API}.STREAM.CREATE.{stream}", f"{_JS_API}.STREAM.UPDATE.{stream}")


def _bind_durable(stream: str, durable: str) -> tuple[str, ...]:
    """``js.subscribe(..., durable=durable, stream=stream)``: look the consumer up, create
    it when missing (the legacy durable call nats-py uses when no consumer ``name`` is set,
    and the named call of servers >= 2.9, with or without a filter subject), then
    acknowledge (or negatively acknowledge) each delivered message."""
    return (
        f"{_JS_API}.CONSUMER.INFO.{stream}.{durable}",
        f"{_JS_API}.CONSUMER.DURABLE.CREATE.{stream}.{durable}",
        f"{_JS_API}.CONSUMER.CREATE.{stream}.{durable}",
        f"{_JS_API}.CONSUMER.CREATE.{stream}.{durable}.>",
        f"$JS.ACK.{stream}.{durable}.>",
    )


@dataclass(frozen=True)
class Permissions:
    """Subjects an identity may publish to and subscribe to (NATS wildcards ``*``, ``>``).

    An empty ``publish`` means nothing at all (rendered as ``deny: [">"]``: an empty
    ``allow`` list would be read as "no restriction" by some servers).
    """

    publish: tuple[str, ...]
    subscribe: tuple[str, ...]


PERMISSIONS: Final[Mapping[str, Permissions]] = {
    "table": Permissions(
        publish=(
            # Only the table service writes table events: the source of truth is its Redis
            # commit, and gateways trust what arrives here.
            TABLE_SUBJECTS,
            *_create_or_update(TABLE_STREAM),
            # Clocks ending too soon for the timer's sweep (ids and deadlines only).
            CLOCK_SUBJECT,
            # TimerConsumer.start creates the timer stream too, so the table service can
            # start before the timer service.
            *_create_or_update(TIMER_STREAM),
            *_bind_durable(TIMER_STREAM, TIMER_CONSUMER),
            # Robots' turns (ids only, issue 20), and their stream.
            ROBOT_SUBJECT,
            *_create_or_update(ROBOT_STREAM),
        ),
        # No table events: the table service never reads the bus back. Its replies, and the
        # expiries its consumer delivers.
        subscribe=(_replies("table"), delivery_subject(TIMER_CONSUMER)),
    ),
    "timer": Permissions(
        publish=(
            # Only the timer service announces expiries: a forged one could auto-play a turn.
            TIMER_SUBJECT,
            *_create_or_update(TIMER_STREAM),
        ),
        subscribe=(
            # Clocks announced by the table service (the rest it sweeps from Redis); no
            # table event: the timer never receives a hand.
            CLOCK_SUBJECT,
            _replies("timer"),
        ),
    ),
    "bots": Permissions(
        # The bots service reads robots' turns from its work queue (ids, no state) and acts
        # through the table service's RobotService: it sees no table event, so no hand.
        publish=(*_create_or_update(ROBOT_STREAM), *_bind_durable(ROBOT_STREAM, ROBOT_CONSUMER)),
        subscribe=(_replies("bots"), delivery_subject(ROBOT_CONSUMER)),
    ),
    "gateway": Permissions(
        # A gateway faces the internet: if it is taken over it must not be able to forge
        # table events or expiries, nor replay the stream's history (every hand of the last
        # hour) through the JetStream API: it publishes nothing.
        publish=(),
        # Live table events of the tables its clients watch (core subscriptions only).
        subscribe=(TABLE_SUBJECTS,),
    ),
}
#: Operators and the tests' assertions: everything (never given to a service).
ADMIN_PERMISSIONS: Final = Permissions(publish=(">",), subscribe=(">",))


def permissions_of(identity: str) -> Permissions:
    """The permissions of ``identity`` (one of :data:`IDENTITIES`)."""
    if identity == ADMIN:
        return ADMIN_PERMISSIONS
    try:
        return PERMISSIONS[identity]
    except KeyError:
        raise ValueError(f"unknown NATS identity {identity!r}") from None


@dataclass(frozen=True)
class TlsFiles:
    """The server's TLS files (PEM). ``ca_file`` verifies client certificates; with
    ``verify_clients`` every client must present one signed by it (mutual TLS)."""

    cert_file: Path
    key_file: Path
    ca_file: Path | None = None
    verify_clients: bool = False


def _quote(value: object) -> str:
    """A string literal of the NATS config format (JSON's double-quoted strings)."""
    return json.dumps(str(value))


def _subjects(subjects: Iterable[str]) -> str:
    return "[" + ", ".join(_quote(s) for s in subjects) + "]"


def _user_block(identity: str, password: str) -> list[str]:
    perms = permissions_of(identity)
    publish = f"{{ allow: {_subjects(perms.publish)} }}" if perms.publish else '{ deny: [">"] }'
    subscribe = (
        f"{{ allow: {_subjects(perms.subscribe)} }}" if perms.subscribe else '{ deny: [">"] }'
    )
    return [
        "    {",
        f"      user: {_quote(identity)}",
        f"      password: {_quote(password)}",
        "      permissions: {",
        f"        publish: {publish}",
        f"        subscribe: {subscribe}",
        "      }",
        "    }",
    ]


def nats_server_config(
    secrets: ClusterSecrets,
    *,
    server_name: str,
    host: str = "0.0.0.0",
    port: int = 4222,
    store_dir: Path | None = None,
    tls: TlsFiles | None = None,
    ping_interval_s: float | None = None,
    ping_max: int | None = None,
) -> str:
    """A complete nats-server config: listen address, name, JetStream (file store in
    ``store_dir``; off when None), one user per identity with its permissions (passwords
    in plain text: keep the file private), optional TLS and server-side pings."""
    lines = [
        "# Generated by services/common/cluster_auth/nats.py: one user per identity, no",
        "# anonymous access. Contains passwords: readable by the server's user only.",
        f"listen: {_quote(f'{host}:{port}')}",
        f"server_name: {_quote(server_name)}",
    ]
    if ping_interval_s is not None:
        lines.append(f"ping_interval: {_quote(f'{ping_interval_s:g}s')}")
    if ping_max is not None:
        lines.append(f"ping_max: {int(ping_max)}")
    if store_dir is not None:
        lines += ["jetstream {", f"  store_dir: {_quote(store_dir)}", "}"]
    if tls is not None:
        lines += [
            "tls {",
            f"  cert_file: {_quote(tls.cert_file)}",
            f"  key_file: {_quote(tls.key_file)}",
        ]
        if tls.ca_file is not None:
            lines.append(f"  ca_file: {_quote(tls.ca_file)}")
        lines += [f"  verify: {'true' if tls.verify_clients else 'false'}", "}"]
    lines += ["authorization {", "  users = ["]
    for identity in IDENTITIES:
        lines += _user_block(identity, secrets.nats_passwords[identity])
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"
