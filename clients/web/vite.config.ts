import { defineConfig } from "vitest/config";

// `npm run build` writes dist/ (served by the gateway's web edge at `/`, DOMINOS_WEB_ROOT).
// `npm run dev` serves the sources and forwards the API to a gateway's web port
// (DOMINOS_WEB_URL, default http://127.0.0.1:8080).
const api = process.env.DOMINOS_WEB_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: false },
  server: { proxy: { "/dominos.v1.DominosService": { target: api, changeOrigin: false } } },
  test: { include: ["test/**/*.test.ts"], environment: "node" },
});
