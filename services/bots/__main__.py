"""``dominos-bots``: run the bots service until SIGTERM/SIGINT."""

from __future__ import annotations

from services.bots.server import create_server
from services.common.entrypoint import run_service


def main() -> None:
    """Entry point of ``dominos-bots``."""
    run_service("bots", create_server)


if __name__ == "__main__":
    main()
