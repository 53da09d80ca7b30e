"""The services' metrics endpoints after scripted games (issue 7)."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from testing.players import play_game

from .conftest import E2ECluster

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(page: str) -> Samples:
    """Every sample of a metrics page by name and labels."""
    out = {}
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def total(
    page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    """The sum of a metric's samples whose labels include ``labels``."""
    return sum(
        value
        for (sample, sample_labels), value in page.items()
        if sample == name and set(labels.items()) <= set(sample_labels)
    )


async def test_counters_after_scripted_games_match_what_was_played(e2e: E2ECluster) -> None:
    table_before = samples(await asyncio.to_thread(e2e.table.scrape))
    games = [await play_game([e2e.gateways[0].address], seed=900 + i) for i in range(2)]
    table_after = samples(await asyncio.to_thread(e2e.table.scrape))
    timer_page = samples(await asyncio.to_thread(e2e.timer.scrape))
    gateway_page = samples(await asyncio.to_thread(e2e.gateways[0].scrape))

    def delta(name: str, **labels: str) -> float:
        return total(table_after, name, **labels) - total(table_before, name, **labels)

    rounds = sum(players[0].views[-1].round_number for players in games)
    assert delta("dominos_rounds_ended_total") == rounds  # every round played ended once
    assert delta("dominos_games_finished_total") == 2
    by_outcome = sum(
        delta("dominos_rounds_ended_total", outcome=o) for o in ("domino", "blocked", "blocked_tie")
    )
    assert by_outcome == rounds
    assert delta("dominos_table_commands_applied_total", command="Start") == 2
    breaks = rounds - 2  # the break after each round but the last ran out (D1)
    assert delta("dominos_table_commands_applied_total", command="Expire") >= breaks
    # Auto-plays are counted with their cause; the scripted players act in time, so only
    # timeouts of a lost race may appear, and never more than the expiries applied.
    autos = delta("dominos_auto_plays_total")
    assert autos == delta("dominos_table_commands_applied_total", command="Expire") - breaks
    # RED metrics of the servers, per method and code.
    assert (
        total(
            gateway_page,
            "dominos_grpc_server_handled_total",
            grpc_method="PlayTile",
            grpc_code="OK",
        )
        > 0
    )
    assert total(gateway_page, "dominos_grpc_server_handled_total", grpc_method="WatchTable") >= 8
    assert (
        total(
            table_after, "dominos_grpc_server_handled_total", grpc_method="Execute", grpc_code="OK"
        )
        > 0
    )
    assert total(timer_page, "dominos_timer_fired_total", kind="break") >= breaks
    assert total(timer_page, "dominos_timer_lateness_seconds_count") >= breaks


async def test_no_metric_label_names_a_table_or_a_player(e2e: E2ECluster) -> None:
    await play_game([e2e.gateways[0].address], seed=950)
    for process in (e2e.table, e2e.timer, e2e.gateways[0]):
        for (name, labels), _ in samples(await asyncio.to_thread(process.scrape)).items():
            for key, value in labels:
                assert key not in ("table_id", "table", "seat", "player", "name"), name
                assert len(value) < 22 or not value.isalnum(), (name, key, value)


async def test_seat_tokens_never_appear_in_any_service_log(e2e: E2ECluster) -> None:
    players = await play_game([g.address for g in e2e.gateways], seed=960)
    tokens = [p.credentials.token for p in players if p.credentials is not None]
    assert len(tokens) == 4
    for process in (e2e.table, e2e.timer, *e2e.gateways):
        text = process.log_path.read_text(errors="replace")
        assert text, process.module  # the processes do log (JSON lines)
        for token in tokens:
            assert token not in text, f"a seat token leaked into the {process.module} log"


async def test_operator_signals_after_a_game(e2e: E2ECluster) -> None:
    """Issue 21: the latency, backlog and lag series an operator needs are filled by a game:
    Redis and JetStream latency on the table service, gateway → table call latency, commit →
    view latency and stream queue depth on the gateway, event-loop lag everywhere, the
    overdue-deadline and outbox gauges, and the work queue's pending count; unary calls and
    streams apart by ``grpc_type``."""
    await play_game([e2e.gateways[0].address], seed=970)
    table = samples(await asyncio.to_thread(e2e.table.scrape))
    timer = samples(await asyncio.to_thread(e2e.timer.scrape))
    gateway = samples(await asyncio.to_thread(e2e.gateways[0].scrape))

    assert total(table, "dominos_redis_command_seconds_count", command="EVALSHA") > 0
    assert total(table, "dominos_redis_command_seconds_count", command="PIPELINE") > 0
    assert total(timer, "dominos_redis_command_seconds_count") > 0
    assert total(table, "dominos_nats_publish_seconds_count", stream="DOMINOS_TABLES") > 0
    assert total(timer, "dominos_nats_publish_seconds_count", stream="DOMINOS_TIMERS") > 0
    streamed = total(
        gateway,
        "dominos_grpc_client_handling_seconds_count",
        grpc_method="ExecuteStream",
        grpc_code="OK",
    )
    calls = streamed + total(
        gateway, "dominos_grpc_client_handling_seconds_count", grpc_method="Execute", grpc_code="OK"
    )
    plays = total(gateway, "dominos_grpc_server_handled_total", grpc_method="PlayTile")
    assert calls >= plays > 0  # every command reached the table service at least once
    # A watched table's commands went on its command stream (issue 22), timed one by one.
    assert streamed >= plays
    assert total(table, "dominos_grpc_server_started_total", grpc_type="bidi_stream") > 0
    views = total(gateway, "dominos_gateway_view_latency_seconds_count")
    assert views > 0
    assert total(gateway, "dominos_gateway_fanout_seconds_count") == views
    # Every view written observed its queue depth (views read as snapshots included).
    assert total(gateway, "dominos_gateway_stream_queue_depth_count") >= views
    for page in (table, timer, gateway):
        assert total(page, "dominos_event_loop_lag_seconds_count") > 0
        # Garbage-collection pauses are timed by generation in every service.
        timed = {
            dict(labels)["generation"]
            for name, labels in page
            if name.endswith("gc_pause_seconds_count")
        }
        assert timed == {"0", "1", "2"}
    # Nothing is overdue or waiting after a game played in time.
    assert ("dominos_timer_overdue_deadlines", ()) in timer
    assert timer[("dominos_timer_oldest_overdue_seconds", ())] < 30
    assert table[("dominos_table_outbox_oldest_seconds", ())] < 30
    pending = total(
        table,
        "dominos_jetstream_consumer_pending",
        stream="DOMINOS_TIMERS",
        consumer="dominos-table",
    )
    assert pending == 0
    assert any(
        name == "dominos_jetstream_consumer_pending" and dict(labels)["stream"] == "DOMINOS_TIMERS"
        for name, labels in table
    )
    # Streams are apart from unary calls.
    watch = total(gateway, "dominos_grpc_server_handled_total", grpc_method="WatchTable")
    assert watch == total(
        gateway,
        "dominos_grpc_server_handled_total",
        grpc_method="WatchTable",
        grpc_type="server_stream",
    )
    assert total(gateway, "dominos_grpc_server_handled_total", grpc_type="unary") >= plays
