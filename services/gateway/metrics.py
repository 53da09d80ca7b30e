"""The gateway's Prometheus metrics."""

from __future__ import annotations

from dominos.v1 import gateway_pb2
from prometheus_client import Counter, Gauge, Histogram

from services.common.service_errors import GATEWAY_LIMITS, TABLE_LIMITS, Limit

STREAMS = Gauge("dominos_gateway_view_streams", "View streams open on this gateway.")
FANOUT_SKIPS = Counter(
    "dominos_gateway_fanout_skipped_versions_total",
    "Table versions a slow client skipped (it received a newer snapshot instead).",
)
RESYNCS = Counter(
    "dominos_gateway_snapshot_reads_total",
    "Table snapshots read from the table service to start a stream or heal a gap.",
)
CONNECTED_SEATS = Gauge(
    "dominos_gateway_connected_seats", "Distinct seats with at least one open view stream here."
)
UPSTREAM_FAILURES = Counter(
    "dominos_gateway_upstream_failures_total",
    "Table-service calls that failed without an answer (transport error, timeout, crash), by "
    "gRPC code; the client got UNAVAILABLE.",
    ["code"],
)
for _code in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "INTERNAL"):
    UPSTREAM_FAILURES.labels(_code)
EVENTS_REJECTED = Counter(
    "dominos_gateway_events_rejected_total",
    "Table events not streamed because the table service did not confirm them, by reason: "
    "unconfirmed (a version the table never reached: forged or corrupt), malformed.",
    ["reason"],
)
for _reason in ("unconfirmed", "malformed"):
    EVENTS_REJECTED.labels(_reason)
STREAMS_REVOKED = Counter(
    "dominos_gateway_streams_revoked_total",
    "View streams ended because their seat was freed (PERMISSION_DENIED / TOKEN_INVALID).",
)
STREAMS_REPLACED = Counter(
    "dominos_gateway_streams_replaced_total",
    "View streams ended by a newer stream of the same seat token (ABORTED / STREAM_REPLACED).",
)
REFUSED = Counter(
    "dominos_gateway_refused_total",
    "Calls and streams refused because their client address holds too much here, by limit "
    "(connections_per_address, streams_per_address).",
    ["limit"],
)
for _limit in GATEWAY_LIMITS:
    REFUSED.labels(_limit)
REFUSALS_REPEATED = Counter(
    "dominos_gateway_refusals_repeated_total",
    "Budget refusals of the table service a gateway repeated by itself until their window "
    "ended (the request never reached the table service), by limit.",
    ["limit"],
)
for _limit in TABLE_LIMITS:
    if _limit is Limit.LOBBIES_PER_ADDRESS:
        continue  # never repeated (see ``refusals``)
    REFUSALS_REPEATED.labels(_limit)
WEB_CALLS = Counter(
    "dominos_gateway_web_calls_total",
    "Calls of the public API that came over the web edge, by protocol (connect, grpc_web) "
    "and method; their outcome and duration are in dominos_grpc_server_* like every call's.",
    ["protocol", "grpc_method"],
)
for _protocol in ("connect", "grpc_web"):
    for _method in gateway_pb2.DESCRIPTOR.services_by_name["DominosService"].methods:
        WEB_CALLS.labels(_protocol, _method.name)

WEB_CONNECTIONS_CLOSED = Counter(
    "dominos_gateway_web_connections_closed_total",
    "Web-edge connections the gateway closed for a bound, by reason: connections_per_address "
    "(closed at accept), head_too_large (431), head_timeout (408: a silent or slow head), "
    "body_timeout, idle (no request for DOMINOS_MAX_CONNECTION_IDLE_SECONDS), malformed_http.",
    ["reason"],
)
for _reason in (
    "connections_per_address",
    "head_too_large",
    "head_timeout",
    "body_timeout",
    "idle",
    "malformed_http",
):
    WEB_CONNECTIONS_CLOSED.labels(_reason)
WEB_CONNECTIONS = Gauge(
    "dominos_gateway_web_connections",
    "Web-edge connections open now (those from trusted proxies not counted).",
)
WEB_REQUESTS_REFUSED = Counter(
    "dominos_gateway_web_requests_refused_total",
    "Web-edge API requests answered before reaching the servicer, by reason: request_malformed "
    "(INVALID_ARGUMENT), request_too_large (RESOURCE_EXHAUSTED), busy (UNAVAILABLE: "
    "DOMINOS_WEB_MAX_REQUESTS in progress); each is also counted in dominos_grpc_server_*.",
    ["reason"],
)
for _reason in ("request_malformed", "request_too_large", "busy"):
    WEB_REQUESTS_REFUSED.labels(_reason)

#: From a millisecond to the 5 s a lagging client may take.
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
VIEW_LATENCY = Histogram(
    "dominos_gateway_view_latency_seconds",
    "From a version's commit in the table service (its committed_at_ms) to its view written "
    "to a stream here: the action -> view fan-out latency (wall clocks of two processes).",
    buckets=_LATENCY_BUCKETS,
)
FANOUT_SECONDS = Histogram(
    "dominos_gateway_fanout_seconds",
    "From a table event's arrival at this gateway to its view written to a stream (queueing, "
    "projection, serialisation; this process's clock only).",
    buckets=_LATENCY_BUCKETS,
)
STREAM_QUEUE_DEPTH = Histogram(
    "dominos_gateway_stream_queue_depth",
    "Versions still waiting in a view stream's queue when one is taken to be written "
    "(0 = the stream keeps up; 16 = full, older versions are being skipped).",
    buckets=(0, 1, 2, 4, 8, 16),
)
UPSTREAM_RETRIES = Counter(
    "dominos_gateway_upstream_retries_total",
    "Table-service calls retried after a transient failure, by method and gRPC code (each "
    "attempt's latency is in dominos_grpc_client_handling_seconds).",
    ["grpc_method", "code"],
)
for _upstream in ("Execute", "GetView", "SetPresence"):
    for _code in ("UNAVAILABLE", "CANCELLED"):
        UPSTREAM_RETRIES.labels(_upstream, _code)
