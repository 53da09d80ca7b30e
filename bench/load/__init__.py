"""Load benchmark of the whole cluster, open loop, with the floor it stands on measured beside it.

The cluster: ``redis-server``, ``nats-server -js``, the table service, the timer service and
ONE gateway, each its own process on free ports (``testing.cluster.ProcessCluster``, started
by ``bench.gateway_bench.measure``: log level warning, the default turn time of 45 s, the join
rate limit raised because every join comes from 127.0.0.1). The players: ``--generators`` (2)
load-generator processes (``python -m bench.load --generator``, asyncio on uvloop), each
owning its share of the tables; every seat is a ``DominosClient`` (``services.client.api``)
with its own TCP connection to the gateway, as every player's device has (``--channels C``:
C shared connections per generator instead), and its own ``WatchTable`` stream read by its
own task (``bench.gateway_bench.SeatStream``). This process starts everything, drives the generators
over their stdin/stdout (JSON lines), samples the floor, listens to the timer, reads the
processes' CPU and memory, and prints ONE table.

Seating (not measured): every table is created (target 500: no game ends during a run), its
three other seats join, its four streams open and show every seat connected; only when all
are seated are the games started, so no turn clock runs out while others are still being
seated. Beside the ``--tables`` played tables, ``--away`` (2 %, at least one) tables are
seated whose players never connect: the table plays for them (S3, a 5 s turn), so the timer
fires all through the run, as it does for the players who drop in real life; they are not
in the latency figures (a 60 s run at one action per 5 s ends few rounds, and the breaks
between rounds are the only other thing the timer fires).

Open loop. Every played table has a schedule: one action every ``--pace`` seconds (5), from
a random phase. At each slot the seat to play (``turn_seat`` of the table's newest view)
sends ``PlayTile`` (a random move of its own latest view's ``legal_moves``) or ``Pass``,
whether or not the previous action has been answered: a slow cluster does not slow the
offered load, so no latency is hidden (no coordinated omission). If that action was still in
flight, the slot acts on a stale view and is most likely refused (``FAILED_PRECONDITION``):
it counts as an error, as it would for a player. Slots that fall while the table has no
turn (the 10 s break after a round, D1) are skipped and counted. A seat acts every 4 x pace
seconds, under the 45 s turn time, so no connected seat is auto-played.

Latency of an action: from its scheduled instant to the arrival of the view of the new
version (the version of the RPC's answer) on ALL FOUR streams of the table. The event loop's
timers have a 1 ms granularity, so a slot's command leaves up to 0.5 ms before or after its
instant: latency counts from the later of the scheduled instant and the send, so a command
sent late is charged its lateness and one sent early is never credited. Also recorded:
scheduled → RPC answer, send → four views, the send's lateness, and each generator's event
loop lag (a 10 ms sleep's overshoot: when it grows, the generator itself is short of CPU).
Histograms are log-bucketed (``bench.histogram``, within 0.8 %), merged over the generators.
The first ``--warmup`` seconds (one pace) are played but not recorded; then ``--seconds``
(60) are. ``commands/s``: answered commands of recorded slots over the recorded time.
Errors: by gRPC status and message (views that never came within 10 s: ``VIEW_TIMEOUT``; a
stream that failed: ``STREAM_ENDED``), warm-up apart.

Timer: a core NATS subscription on ``dominos.v1.timer.expired`` receives every
``TimerExpired``; of the first firings (``attempt`` 1) during the run, ``fired_at_ms -
deadline_ms`` (the timer's lateness, as its ``dominos_timer_lateness_seconds`` histogram
observes it, to the millisecond) and receive time - deadline. Firings again (the table had
not moved on after the retry interval) are counted.

The floor, sampled ``--floor-hz`` (50) times a second in this process during the recorded
time, against the same servers under the same load: a Redis ``EVALSHA`` of ``return 1``, a
core NATS publish → subscribe hop of 400 bytes between two connections
(``bench.table_bench.Floor``), a gRPC unary call to an empty handler, and a server-stream
message of 300 bytes (one-way: the handler stamps ``perf_counter_ns``, a system-wide
monotonic clock, into each message it sends every 20 ms; the receiver subtracts), both served
by a bare ``grpc.aio`` server in its own process (``--floor-server``). Their p50s are summed;
the figure of merit is our p50 over that sum. An action needs more than one of each: two
unary hops (client → gateway → table), two Redis round trips, a JetStream publish (a round
trip), a NATS hop and four stream messages.

Resources: CPU seconds (user + system, and the system share, ``/proc/<pid>/stat``) of every
process over the recorded time, per 1,000 commands (answered + fired by the timer: each
firing makes the table service act); what the rest of the machine used meanwhile
(``/proc/stat`` minus ours: on a shared machine, the other processes' load shows up as
latency); peak RSS (``VmHWM``). Memory: the gateway's ``VmRSS`` and Redis's ``used_memory``
before any table, after seating (quiet: every stream has its start view) and at the end;
``delta / streams`` and ``delta / live tables`` (played + absent); ``MEMORY USAGE`` of a
sample of tables (``TableStore.memory_usage``) and of every key by kind; and, after the
last step, the floor of a stream: the RSS per stream of a bare ``grpc.aio`` server holding
as many idle streams over as many connections (``bench.gateway_bench.measure_floor``).

Scenarios: ``--tables N`` (100 by default; 2500 = ten thousand streams), ``--idle`` (one
table, one action every 0.1 s, 60 s: the latency of a quiet cluster against its floor),
``--ramp`` (steps ``--steps`` of tables, 20 s each unless ``--seconds``, on the same cluster,
tables added between steps; stops at the first step whose p99 >= ``--p99-limit`` ms (15) or
that had errors, unless ``--keep-going``; reports the largest N before the first bad step)
and ``--smoke`` (20 tables, one action every 0.25 s, 15 s: for the test suite). Results go
to ``bench/results/load-<scenario>-<time>.json`` (or ``--json PATH``); ``python -m
bench.compare A.json B.json`` compares two.

Targets (reported, not enforced): 2,500 tables at one action per 5 s: p99 <= 15 ms, no
errors, timer lateness p99 <= 10 ms; idle p50 <= 1.5 ms and <= 2x the floor; <= 1.5 KB of
Redis per live table; <= 10 KB of gateway memory per open stream.

Usage: ``python -m bench.load [--tables N | --idle | --ramp [--steps LIST] | --smoke] [--pace S]
[--seconds S] [--warmup S] [--generators G] [--channels C] [--away F] [--seed N]
[--keep-going] [--json PATH] [--keep-logs] [--no-stream-floor]``.

The package, by concern: ``config`` (the scenario, the command line, the targets),
``generator`` (the generator process, its players and its JSON-lines protocol), ``floor``
(the latency floor and its bare gRPC server), ``watch`` (the timer's firings, CPU and memory
of the processes and of Redis), ``step`` (seating and playing one step), ``figures`` (a
step's flat figures and verdicts), ``report`` (the printed tables) and ``main`` (the steps of
a scenario, the results file, the entry point of ``python -m bench.load``).
"""
