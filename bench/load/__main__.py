"""``python -m bench.load``: see ``bench.load`` and ``bench.load.main``."""

from __future__ import annotations

import sys

from services.common.grpc_io import use_poller_io

use_poller_io()  # as the services do (the floor pipeline's processes are children)

from bench.load.main import main  # noqa: E402

sys.exit(main())
