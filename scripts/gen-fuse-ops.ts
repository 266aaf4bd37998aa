// Writes native/fuse3/ops.h from src/fuse/protocol.ts (`npm run gen:fuse-ops` after changing an
// operation's number or an open flag; then rebuild the binding: scripts/setup).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { OPS_HEADER_PATH, opsHeader } from "../src/fuse/protocolHeader.ts";

writeFileSync(OPS_HEADER_PATH, opsHeader());
process.stdout.write(`${fileURLToPath(OPS_HEADER_PATH)} written\n`);
