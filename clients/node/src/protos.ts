// Where the contract's .proto files are: the repository's protos/ folder, seen from this file
// (clients/node/src/), or DOMINOS_PROTOS.

import { fileURLToPath } from "node:url";

/** The repository's protos/ folder (DOMINOS_PROTOS overrides it). */
export const DEFAULT_PROTOS_DIR =
  process.env["DOMINOS_PROTOS"] ?? fileURLToPath(new URL("../../../protos", import.meta.url));
