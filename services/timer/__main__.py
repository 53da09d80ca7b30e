"""``dominos-timer``: run the timer service until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio

from services.common.grpc_server import serve_until_signal
from services.common.logging import configure_logging
from services.common.metrics import set_build_info, start_metrics_server
from services.common.settings import Settings
from services.timer.server import create_server


async def _serve(settings: Settings) -> None:
    server, _ = await create_server(settings)
    await serve_until_signal(server.runtime)


def main() -> None:
    """Entry point of ``dominos-timer``."""
    settings = Settings.from_env()
    configure_logging(settings.log_level, "timer")
    set_build_info("timer")
    start_metrics_server(settings.metrics_port)
    asyncio.run(_serve(settings))


if __name__ == "__main__":
    main()
