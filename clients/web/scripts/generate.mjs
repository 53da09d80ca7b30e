// Generates src/gen/ from ../../protos with buf and the local protoc-gen-es (buf.gen.yaml).
// buf is the npm package @bufbuild/buf (a devDependency); DOMINOS_BUF names another binary,
// else the repository's virtual environment's (.venv/bin/buf) or `buf` on PATH is tried.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const localBuf = resolve(here, "node_modules/.bin/buf");
const venvBuf = resolve(here, "../../.venv/bin/buf");
const buf =
  process.env.DOMINOS_BUF ||
  [localBuf, venvBuf].find((path) => existsSync(path)) ||
  "buf";
const result = spawnSync(buf, ["generate"], { cwd: here, stdio: "inherit" });
if (result.error) {
  console.error(
    `cannot run buf (${buf}): ${result.error.message}\n` +
      "run `npm ci` here (it installs @bufbuild/buf), or set DOMINOS_BUF to a buf binary",
  );
  process.exit(1);
}
if (result.status !== 0) process.exit(result.status ?? 1);
if (!existsSync(join(here, "src/gen/dominos/v1/gateway_pb.ts"))) {
  console.error("buf generate produced no src/gen/dominos/v1/gateway_pb.ts");
  process.exit(1);
}
