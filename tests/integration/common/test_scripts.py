"""``services.common.scripts`` against a real Redis: a script is called by its digest and
loaded again when the server forgot it (a restart, a failover, ``SCRIPT FLUSH``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from services.common.scripts import call_script

#: Sets KEYS[1] to ARGV[1] and answers the key count and the value it read back.
SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]); return {#KEYS, redis.call('GET', KEYS[1])}"
KEY = "dominos:{t}:table:scripted"


async def test_a_script_is_called_by_digest_and_loaded_again_after_a_flush(
    redis_connect: Callable[[str], Any], redis_client: Redis
) -> None:
    table = redis_connect("table")
    script = table.register_script(SCRIPT)
    assert await call_script(table, script, [KEY], ["one"]) == [1, b"one"]
    await redis_client.script_flush()
    assert await call_script(table, script, [KEY], [b"two"]) == [1, b"two"]
    assert await redis_client.get(KEY) == b"two"
    assert await redis_client.script_exists(script.sha) == [True]
