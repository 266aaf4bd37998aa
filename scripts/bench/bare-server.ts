// The baseline of the service benchmark: bare Fastify routes answering the same requests as txtfs
// (a conditional GET, a full GET of the same note body, a JSON PUT) with no auth, store, rate
// limit or hooks. txtfs/bare ratios then say what the service adds on top of the framework.
// Run by scripts/bench/service.ts in its own process: node scripts/bench/bare-server.ts NOTE.json
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const notePath = process.argv[2];
if (!notePath) {
  process.stderr.write("usage: bare-server.ts NOTE.json  (the JSON body a txtfs GET returned)\n");
  process.exit(2);
}
// The very object txtfs returned, so both servers serialize and send the same bytes.
const note = JSON.parse(readFileSync(notePath, "utf8")) as Record<string, unknown>;
const etag = String(note.etag);
let putCount = 0;

const app = Fastify({ logger: false });

app.get("/note", async (req, reply) => {
  reply.header("ETag", etag);
  if (req.headers["if-none-match"] === etag) return reply.code(304).send();
  return note;
});

app.put<{ Body: { content: string } }>("/note", async (req, reply) => {
  const newTag = `"bare-${++putCount}"`;
  reply.header("ETag", newTag);
  return { file: { ...note, content: req.body.content, etag: newTag } };
});

await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
const port = typeof address === "object" && address ? address.port : 0;
process.stdout.write(`bare http://127.0.0.1:${port}\n`);

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
// The benchmark holds our stdin open; if it dies without stopping us, do not linger.
process.stdin.on("end", () => void stop());
process.stdin.resume();
