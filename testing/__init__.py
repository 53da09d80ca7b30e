"""The test and benchmark harness, shared by ``tests`` and ``bench`` (and importing neither).

- ``servers``: real ``redis-server`` and ``nats-server`` child processes on free ports
  (:class:`~testing.servers.RedisServer`, :class:`~testing.servers.NatsServer`), with chaos
  operations (kill, stop, pause, restart); ``free_port``; ``redis_cluster``: a local Redis
  Cluster of three primaries.
- ``services``: our own services as real processes (:class:`~testing.services.ServiceProcess`).
- ``cluster``: a whole cluster of real processes (:class:`~testing.cluster.ProcessCluster`):
  Redis, NATS and any number of table, timer and gateway replicas, for the end-to-end tests,
  the chaos suite and the benchmarks.
- ``players``: scripted players of the public API and the one way to seat four of them at a
  table (:func:`~testing.players.seat_four`); ``chaos_players``: players that survive faults.
- ``secrets``, ``certificates``, ``limits``: the session's cluster secrets, throw-away TLS
  certificates, the budgets test clusters run without.
- ``waiting``: polling a condition until a deadline; ``logs``: restoring logging after a test.
- ``games``: whole games driven by the rules engine; ``stats``: percentiles;
  ``procfs``: what Linux ``/proc`` says about a process (memory, CPU, thread states).
"""
