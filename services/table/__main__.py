"""``dominos-table``: run the table service until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio

from services.common.grpc_server import serve_until_signal
from services.common.logging import configure_logging, get_logger
from services.common.metrics import set_build_info, start_metrics_server
from services.common.settings import Settings
from services.table.server import create_server


async def _serve(settings: Settings) -> None:
    server, port = await create_server(settings)
    get_logger(__name__).info("table.serving", port=port)
    await serve_until_signal(server.runtime)


def main() -> None:
    """Entry point of ``dominos-table``."""
    settings = Settings.from_env()
    configure_logging(settings.log_level, "table")
    set_build_info("table")
    start_metrics_server(settings.metrics_port)
    asyncio.run(_serve(settings))


if __name__ == "__main__":
    main()
