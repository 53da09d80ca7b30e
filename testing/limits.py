"""Budgets of test clusters.

Every client of a test or benchmark cluster is 127.0.0.1, so the per-address budgets of
production (creates, open lobbies, streams, connections) would count a whole test suite as
one client. Test clusters therefore start with them off (the values below, as environment
variables and as settings), and the tests of the budgets themselves
(``tests/integration/table/test_limits.py``, ``tests/e2e/test_limits.py``, the abuse run in
``tests/chaos``) run with production's defaults or set their own.
"""

from __future__ import annotations

from typing import Final

from services.common.settings import Settings

#: Table-service budgets off ("0"), by variable.
TABLE_ENV: Final = {
    "DOMINOS_CREATES_PER_ADDRESS_MINUTE": "0",
    "DOMINOS_CREATES_PER_ADDRESS_HOUR": "0",
    "DOMINOS_CREATES_PER_SECOND": "0",
    "DOMINOS_LOBBIES_PER_ADDRESS": "0",
    "DOMINOS_LOBBY_CHANGES_PER_MINUTE": "0",
    "DOMINOS_CONNECTIONS_PER_SEAT_MINUTE": "0",
}
#: Gateway caps off (or as high as they go), by variable.
GATEWAY_ENV: Final = {
    "DOMINOS_STREAMS_PER_SEAT": "1000",
    "DOMINOS_STREAMS_PER_ADDRESS": "0",
    "DOMINOS_CONNECTIONS_PER_ADDRESS": "0",
}
#: The same, per service (``services.<name>``).
BY_SERVICE: Final = {"table": TABLE_ENV, "gateway": GATEWAY_ENV}


def without_budgets(settings: Settings, service: str) -> Settings:
    """``settings`` with the budgets of ``service`` off, as the variables above say."""
    variables = BY_SERVICE[service].items()
    return settings.replace(
        **{name.removeprefix("DOMINOS_").lower(): int(value) for name, value in variables}
    )


#: Every budget at its production default, as environment variables.
PRODUCTION: Final = {
    name: str(getattr(Settings(), name.removeprefix("DOMINOS_").lower()))
    for env in BY_SERVICE.values()
    for name in env
}
