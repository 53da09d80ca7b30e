"""``dominos-timer``: run the timer service until SIGTERM/SIGINT."""

from __future__ import annotations

from services.common.entrypoint import run_service
from services.timer.server import create_server


def main() -> None:
    """Entry point of ``dominos-timer``."""
    run_service("timer", create_server)


if __name__ == "__main__":
    main()
