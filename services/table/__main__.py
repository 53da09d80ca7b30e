"""``dominos-table``: run the table service until SIGTERM/SIGINT."""

from __future__ import annotations

from services.common.grpc_io import use_poller_io

use_poller_io()  # before anything imports grpc

from services.common.entrypoint import run_service  # noqa: E402
from services.table.server import create_server  # noqa: E402


def main() -> None:
    """Entry point of ``dominos-table``."""
    run_service("table", create_server)


if __name__ == "__main__":
    main()
