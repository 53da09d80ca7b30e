// Shared by the tests: the gateway under test.

export const GATEWAY = process.env["DOMINOS_GATEWAY"] || "127.0.0.1:50051";
