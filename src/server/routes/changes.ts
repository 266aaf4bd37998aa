// GET /api/v1/changes: the account's change feed, with an optional long-poll (`wait` seconds).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { parseCursor, readChanges } from "../domain/feed.ts";
import { actorOf } from "../http/mutation.ts";
import type { RouteDeps } from "./deps.ts";
import { ChangesQuery } from "./schemas.ts";

export function changeRoutes({ store, closing }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const opts = { config: { scope: "files:read" as const }, schema: { querystring: ChangesQuery } };
    app.get("/api/v1/changes", opts, async (req, reply) => {
      const actor = actorOf(req);
      const first = await store.read((tx) =>
        readChanges(tx, actor, parseCursor(req.query.cursor), req.query.limit),
      );
      // Re-reads continue from the resolved position (`latest` must not move with the head).
      const read = () => store.read((tx) => readChanges(tx, actor, first.cursor, req.query.limit));
      const wait = req.query.wait ?? 0;
      if (first.changes.length > 0 || wait === 0) return first;
      // Long-poll: subscribe, then re-read once (a commit between the read and the subscription
      // would otherwise be missed), then wait for a commit, the timeout, or shutdown.
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const unsubscribe = store.subscribe(actor.userId, wake);
      const timer = setTimeout(wake, wait * 1000 * (1 + Math.random() * 0.1));
      // The response's close before it is sent means the client went away.
      reply.raw.once("close", wake);
      try {
        const again = await read();
        if (again.changes.length > 0) return again;
        await Promise.race([woken, closing]);
        return reply.raw.destroyed ? again : await read();
      } finally {
        clearTimeout(timer);
        unsubscribe();
        reply.raw.off("close", wake);
      }
    });
  };
}
