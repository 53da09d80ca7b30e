"""``dominos-table``: run the table service until SIGTERM/SIGINT."""

from __future__ import annotations

from services.common.entrypoint import run_service
from services.table.server import create_server


def main() -> None:
    """Entry point of ``dominos-table``."""
    run_service("table", create_server)


if __name__ == "__main__":
    main()
