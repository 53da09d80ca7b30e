"""``dominos-gateway``: run the gateway until SIGTERM/SIGINT."""

from __future__ import annotations

from services.common.entrypoint import run_service
from services.gateway.server import create_server


def main() -> None:
    """Entry point of ``dominos-gateway``."""
    run_service("gateway", create_server)


if __name__ == "__main__":
    main()
