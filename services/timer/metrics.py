"""The timer service's Prometheus metrics (exported on its metrics port)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LATENESS = Histogram(
    "dominos_timer_lateness_seconds",
    "Time between a deadline and the moment the timer service fired it.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
FIRED = Counter("dominos_timer_fired_total", "Deadlines fired (first attempts), by kind.", ["kind"])
REFIRED = Counter(
    "dominos_timer_refired_total",
    "Deadlines fired again because their table had not moved on after the retry interval.",
    ["kind"],
)
CLAIMED_BY_OTHER = Counter(
    "dominos_timer_claimed_by_other_total",
    "Due deadlines this replica found already claimed by another replica.",
)
MOVED_ON = Counter(
    "dominos_timer_moved_on_total",
    "Due deadlines dropped because their table had moved on: before firing, or at the "
    "check one retry interval after firing (the usual end of a fired deadline).",
)
OVERDUE = Gauge(
    "dominos_timer_overdue_deadlines",
    "Deadlines of this replica's shards past due by more than the grace (2 s) and still in "
    "the index: not fired, or fired and not acted on (sampled at each sweep).",
)
OLDEST_OVERDUE = Gauge(
    "dominos_timer_oldest_overdue_seconds",
    "How far past due the oldest deadline of this replica's shards is, beyond 0 only once "
    "past the grace (sampled at each sweep).",
)
SCHEDULED = Gauge("dominos_timer_scheduled", "Deadlines in this replica's in-process schedule.")
ERRORS = Counter(
    "dominos_timer_errors_total", "Errors talking to Redis or NATS, by dependency.", ["dependency"]
)

#: Every label set exists from the start at 0, so the first firing, refire or error shows in
#: rate()/increase() (a series born at 1 would be counted from its second increment only).
for _kind in ("turn", "break", "presence"):
    FIRED.labels(_kind)
    REFIRED.labels(_kind)
for _dependency in ("redis", "nats"):
    ERRORS.labels(_dependency)
