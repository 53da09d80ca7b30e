"""Redis ACL users: which keys and commands each identity may use, rendered as an ACL file.

Every connection authenticates (user name = identity, password from
:class:`~services.common.cluster_auth.secrets.ClusterSecrets`); the ``default`` user is off
and has no password, so an anonymous client can run nothing but ``AUTH``/``HELLO``
(:data:`DEFAULT_USER_LINE` says why it keeps its rights nonetheless). Each service may use
only the keys and commands its code uses (Redis 7 ACLs; the key table is in
``services/common/schema.py``):

- ``table`` owns the tables: their hashes, outboxes, the invitation codes, create requests,
  join-failure counters, budgets and phase indexes; it writes (never reads) the deadline
  indexes and only checks (``HKEYS``) the gateways' presence leases.
- ``timer`` reads the deadline indexes and each table's clock fields (``tn``, ``dk``: ACLs
  have no per-field rights, so the whole hash is readable, never writable), owns the claim
  leases (``dominos:{S}:timerlease:<T>``) and the replicas' heartbeats (``dominos:timers``),
  and may only read and remove (``HGETALL``, ``HDEL``) presence leases, to claim those that ran
  out.
- ``gateway`` touches nothing but its presence leases (``dominos:{S}:leases:<T>`` and the
  indexes ``dominos:{S}:presence``): no table hash (no state, no nonces), no deadline index,
  no outbox.
- ``admin`` (operators, the tests' assertions) may do everything.

Key rights (Redis 7 selectors): ``%R~`` read only, ``%W~`` write only, ``~`` both. A command
needs read right on the keys it reads (``HGET``, ``ZSCORE``) and write right on those it
changes (``HSET``, ``ZADD``); one that does neither (``EXISTS``, ``HEXISTS``) needs either.

Lua scripts: Redis cannot know what a script does with its keys, so ``EVALSHA`` asks read
*and* write right on every key it is called with. Each service therefore has a second
selector that allows ``EVALSHA`` and ``SCRIPT LOAD`` (redis-py's ``Script`` loads a script
after ``NOSCRIPT``) on exactly the keys its scripts are called with, and nothing else; every
command the script then runs (``redis.call``) is checked against the first selector's keys
and commands, so a script cannot do more than the service could do by itself. ``EVAL`` (a
script sent inline) is not allowed: the services only call their registered scripts.

Connection handshake (redis-py 8): ``HELLO 3 AUTH <user> <password>`` (Redis lets everyone
run ``HELLO``/``AUTH``), then health checks (``PING``) on connections idle for 10 s; no
``SELECT`` (database 0), no ``CLIENT SETNAME``; ``connect_redis`` turns off redis-py's
``CLIENT SETINFO`` (Redis 7.0 has no ``client|setinfo`` to allow, 7.2+ would log a denial
per connection).

The key patterns are the schema's (:class:`~services.common.schema.Pattern`);
``tests/unit/common/test_cluster_auth_redis.py`` checks that each matches its key and no
other and that the services' Lua scripts call only granted commands,
``tests/deploy/test_redis_values.py`` that the Helm values (``deploy/helm/redis-values.yaml``)
repeat these rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from services.common.cluster_auth.secrets import ADMIN, IDENTITIES, ClusterSecrets
from services.common.schema import Pattern

__all__ = [
    "ADMIN_ACL",
    "DEFAULT_USER_LINE",
    "REDIS_ACLS",
    "RedisAcl",
    "acl_file",
    "acl_of",
    "acl_user_line",
    "chart_acl_file",
    "password_hash",
]

# -- the keys (``services.common.schema``) -------------------------------------------------

#: A table's hash: state, log, turn number, per seat its token nonce and hash.
TABLE: Final = Pattern.TABLE
#: A table's events not yet acknowledged by NATS.
OUTBOX: Final = Pattern.OUTBOX
#: Tables whose outbox filled (the relay's work list).
PENDING: Final = Pattern.PENDING
#: Every running clock's deadline (the timer service's index).
DEADLINES: Final = Pattern.DEADLINES
#: Invitation code -> table id.
CODES: Final = Pattern.CODES
#: Create request id -> the table it made.
CREATES: Final = Pattern.CREATES
#: Failed join attempts per peer and minute.
JOIN_FAILURES: Final = Pattern.JOIN_FAILURES
#: Live tables per phase (the ``dominos_tables`` gauge).
PHASES: Final = Pattern.PHASES
#: Budgets that are not a table's: creates per address and cluster-wide.
LIMITS: Final = Pattern.LIMITS
#: A table's budgets: lobby changes, connections per seat.
TABLE_LIMITS: Final = Pattern.TABLE_LIMITS
#: The open lobbies created from an address.
LOBBIES: Final = Pattern.LOBBIES
#: The timer service's claim on a table's running clock.
TIMER_LEASE: Final = Pattern.TIMER_LEASE
#: The gateways' presence leases on a table's seats.
LEASES: Final = Pattern.LEASES
#: Every presence lease's expiry.
PRESENCE: Final = Pattern.PRESENCE
#: The timer replicas' heartbeats.
TIMERS: Final = Pattern.TIMERS

#: What a Redis Cluster client runs besides its commands (``DOMINOS_REDIS_CLUSTER``): the
#: slot map (``CLUSTER SLOTS``/``SHARDS``), the command table it routes keys by (``COMMAND``),
#: ``ASKING`` on a slot being migrated. Harmless on a single Redis.
CLUSTER_CLIENT: Final = "cluster|slots cluster|shards command asking"

#: Loading and calling the services' registered Lua scripts (see the module docstring).
SCRIPT_COMMANDS: Final = ("evalsha", "script|load")


@dataclass(frozen=True)
class RedisAcl:
    """What one identity may do in Redis (see the module docstring)."""

    #: Key patterns with their rights: ``%R~`` read, ``%W~`` write, ``~`` both.
    keys: tuple[str, ...]
    #: Commands, sent directly or from its Lua scripts (``+cmd``, ``+cmd|sub``, ``+@cat``).
    commands: tuple[str, ...]
    #: Keys its Lua scripts are called with (``EVALSHA``/``SCRIPT LOAD`` only, on these).
    script_keys: tuple[str, ...] = ()
    #: Pub/Sub channel patterns (``&...``); the services use none.
    channels: tuple[str, ...] = ()

    def key_rules(self) -> str:
        """The key patterns, as ACL rules (``resetkeys`` first)."""
        return " ".join(("resetkeys", *self.keys))

    def channel_rules(self) -> str:
        """The channel patterns, as ACL rules (``resetchannels`` first)."""
        return " ".join(("resetchannels", *self.channels))

    def command_rules(self) -> str:
        """The commands, from none (``-@all``), then the scripts' selector."""
        rules = ["-@all", *(f"+{command}" for command in self.commands)]
        if self.script_keys:
            keys = " ".join(f"~{key}" for key in self.script_keys)
            scripts = " ".join(f"+{command}" for command in SCRIPT_COMMANDS)
            rules.append(f"({keys} {scripts})")
        return " ".join(rules)

    def rules(self) -> str:
        """Every rule of the user after its password: keys, channels, commands."""
        return f"{self.key_rules()} {self.channel_rules()} {self.command_rules()}"


def _commands(*groups: str) -> tuple[str, ...]:
    """The commands of space-separated groups, sorted, each once."""
    return tuple(sorted({command for group in groups for command in group.split()}))


#: The services' users.
REDIS_ACLS: Final[Mapping[str, RedisAcl]] = MappingProxyType(
    {
        "table": RedisAcl(
            keys=(
                # The table hash: HMGET/HGET (load, read_log), EXISTS, and the commit script
                # (HGET, HSET, HDEL, PEXPIRE).
                f"~{TABLE}",
                # Outbox: the commit script adds (ZADD, PEXPIRE) and returns it (ZRANGE); the
                # relay reads (ZRANGE) and clears it (ZREMRANGEBYSCORE, ZCARD).
                f"~{OUTBOX}",
                # Pending outboxes: ZADD NX / ZREM (scripts), ZRANGEBYSCORE, ZREM (relay).
                f"~{PENDING}",
                # Deadline index: the commit script sets or clears the table's deadline
                # (ZADD, ZREM); the table service never reads it.
                f"%W~{DEADLINES}",
                # Codes: EXISTS (code_taken), GET (join lookup), SET PX (commit).
                f"~{CODES}",
                # Create requests: GET (created_by), SET PX (commit).
                f"~{CREATES}",
                # Join failures: GET, PTTL, INCR, PEXPIRE (join attempt script), DECR (refund).
                f"~{JOIN_FAILURES}",
                # Phase indexes: ZADD/ZREM (commit), ZREMRANGEBYSCORE + ZCARD (gauge), ZSCORE
                # (is a reserved lobby still one).
                f"~{PHASES}",
                # Budgets (issue 15): GET, PTTL, INCR, PEXPIRE (take script), DECR (refund).
                f"~{LIMITS}",
                f"~{TABLE_LIMITS}",
                # Open lobbies per address: ZRANGEBYSCORE, ZREM (pruning), ZREMRANGEBYSCORE,
                # ZCARD, ZRANGE, ZADD, PEXPIRE (reserve script).
                f"~{LOBBIES}",
                # Presence leases: HKEYS only (an expiry is ignored while a stream holds one of
                # the seat's leases again).
                f"%R~{LEASES}",
            ),
            commands=_commands(
                "ping",  # redis-py's health check
                CLUSTER_CLIENT,
                "hmget hget hset hdel exists pexpire",  # the table hash
                "get set incr decr pttl",  # codes, create requests, join failures, budgets
                "zadd zrem zrange zrangebyscore zremrangebyscore zcard zscore",  # sorted sets
                "hkeys",  # presence leases
            ),
            script_keys=(
                # commit: the table hash, its outbox, its shard's deadline and pending indexes,
                # its code, the create request (or the table hash again), the shard's five
                # phase indexes.
                TABLE,
                OUTBOX,
                DEADLINES,
                PENDING,
                CODES,
                CREATES,
                PHASES,
                # mark_published: the pending index and outboxes (above).
                # join attempt and refund: the client's failure counters.
                JOIN_FAILURES,
                # budgets: their counters; lobby reservation: the address's lobbies.
                LIMITS,
                TABLE_LIMITS,
                LOBBIES,
            ),
        ),
        "timer": RedisAcl(
            keys=(
                # Deadline index: ZRANGEBYSCORE (sweep), ZSCORE (claim script). Read only.
                f"%R~{DEADLINES}",
                # The table hash: HMGET tn dk (clocks), HGET tn (claim script). Read only: the
                # timer service asks the table service to act, it never writes a table.
                f"%R~{TABLE}",
                # Claim leases: GET, SET PX (claim script).
                f"~{TIMER_LEASE}",
                # Presence index: ZRANGEBYSCORE (sweep), ZSCORE + ZREM (claim of a seat whose
                # leases ran out), ZADD (re-index a seat renewed meanwhile).
                f"~{PRESENCE}",
                # Presence leases: HGETALL + HDEL of leases that ran out (claim script).
                f"~{LEASES}",
                # The replicas' heartbeats: ZADD, ZREMRANGEBYSCORE, ZRANGE (heartbeat
                # script), ZREM (leaving).
                f"~{TIMERS}",
            ),
            commands=_commands(
                "ping",  # redis-py's health check
                CLUSTER_CLIENT,
                "zrangebyscore zscore zrem",  # deadline and presence indexes
                "zadd zremrangebyscore zrange",  # heartbeats
                "hmget hget hgetall hdel",  # table clocks, presence leases
                "get set",  # claim leases
                "time",  # the presence and heartbeat scripts take Redis's clock
            ),
            script_keys=(
                # heartbeat: the replicas' heartbeats.
                TIMERS,
                # claim: the deadline index, then per table its hash and its claim lease.
                DEADLINES,
                TABLE,
                TIMER_LEASE,
                # claim of a lease that ran out: the leases hash, the presence index.
                LEASES,
                PRESENCE,
            ),
        ),
        "gateway": RedisAcl(
            keys=(
                # Its presence leases: HSET + PEXPIRE (take, renew), HDEL + HGETALL (release:
                # was it the seat's last?).
                f"~{LEASES}",
                # Presence index: ZADD GT (take, renew), ZREM (release). Never read.
                f"%W~{PRESENCE}",
            ),
            commands=_commands(
                "ping",  # redis-py's health check
                CLUSTER_CLIENT,
                "hset hgetall hdel pexpire",  # presence leases
                "zadd zrem",  # presence index
                "time",  # the lease scripts take Redis's clock
            ),
            # renew: the presence index, then one leases hash per lease; release: hash, index.
            script_keys=(LEASES, PRESENCE),
        ),
        # The bots service keeps nothing (issue 20: a robot's seat is found again from the
        # robots' work queue): no key, no channel, nothing but the health check.
        "bots": RedisAcl(keys=(), commands=_commands("ping")),
    }
)

#: Operators and the tests' assertions: every key, channel and command.
ADMIN_ACL: Final = RedisAcl(keys=("~*",), commands=("@all",), channels=("&*",))

#: No anonymous access: ``default``, the user every connection starts as, is off and has no
#: password, so a client must ``AUTH``/``HELLO`` as another user before any command (NOAUTH)
#: and nobody can become ``default``. Its rights are all, on purpose, and reach no client:
#: Redis before the fix of redis/redis#14541 (7.0.15 included) replays the append-only
#: file's MULTI/EXEC blocks as ``default`` and re-checks them against its rights at EXEC,
#: and every Lua script's writes are such a block; with ``-@all`` here every table commit
#: was silently dropped from the AOF on a restart
#: (``tests/integration/security/test_redis_acl.py``).
DEFAULT_USER_LINE: Final = "user default off resetpass resetkeys ~* resetchannels &* +@all"


def acl_of(identity: str) -> RedisAcl:
    """The ACL of ``identity`` (``table``, ``timer``, ``gateway``, ``admin``)."""
    if identity == ADMIN:
        return ADMIN_ACL
    try:
        return REDIS_ACLS[identity]
    except KeyError:
        raise ValueError(f"unknown identity {identity!r}") from None


def password_hash(password: str) -> str:
    """The SHA-256 of a password as an ACL rule (``#<hex>``): the file never holds passwords."""
    return "#" + hashlib.sha256(password.encode()).hexdigest()


def acl_user_line(identity: str, password: str) -> str:
    """The ``user`` line of ``identity`` (the same syntax in an ACL file and in redis.conf)."""
    if not password or any(ch.isspace() for ch in password):
        raise ValueError(f"the Redis password of {identity!r} is empty or has whitespace")
    return f"user {identity} on {password_hash(password)} {acl_of(identity).rules()}"


def chart_acl_file(passwords: Mapping[str, str], chart_password: str) -> str:
    """The ACL file of a Redis Cluster installed by a chart (``deploy/helm/
    redis-cluster-values.yaml``): the chart's own tooling (probes, the cluster-creation job,
    replication) authenticates as ``default`` with ``chart_password``, so ``default`` is on
    with that password only (never anonymous) and every right, like ``admin``; then every
    identity with its password from ``passwords``."""
    lines = [f"user default on resetpass {password_hash(chart_password)} ~* &* +@all"]
    lines += [acl_user_line(identity, passwords[identity]) for identity in IDENTITIES]
    return "\n".join(lines) + "\n"


def acl_file(secrets: ClusterSecrets) -> str:
    """The ACL file (``aclfile``) of a cluster: ``default`` off, then every identity."""
    lines = [DEFAULT_USER_LINE]
    lines += [acl_user_line(identity, secrets.redis_passwords[identity]) for identity in IDENTITIES]
    return "\n".join(lines) + "\n"
