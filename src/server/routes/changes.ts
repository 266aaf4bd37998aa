// GET /api/v1/changes: the account's change feed, with an optional long-poll (`wait` seconds).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { parseCursor, readChanges } from "../domain/feed.ts";
import { actorOf } from "../http/mutation.ts";
import { op } from "../openapi/describe.ts";
import { ChangeRecord } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { ChangesQuery } from "./schemas.ts";

const changesDoc = op({
  id: "changes",
  verb: "changes",
  area: "sync",
  summary: "Change feed after `cursor` (0 = everything); tombstones for deletes; `wait` long-polls.",
  ok: {
    200: Type.Object({
      changes: Type.Array(ChangeRecord),
      cursor: Type.Integer({ description: "Pass back as `cursor` to continue." }),
      hasMore: Type.Boolean(),
    }),
  },
  errors: { 410: "The cursor is older than the feed's retention: resync from cursor=0." },
});

export function changeRoutes({ store, closing }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const opts = {
      config: { scope: "files:read" as const },
      schema: { querystring: ChangesQuery, ...changesDoc },
    };
    app.get("/api/v1/changes", opts, async (req, reply) => {
      const actor = actorOf(req);
      const kinds = { attachments: req.query.include === "attachments" };
      const first = await store.read((tx) =>
        readChanges(tx, actor, parseCursor(req.query.cursor), req.query.limit, kinds),
      );
      // Re-reads continue from the resolved position (`latest` must not move with the head).
      const read = () => store.read((tx) => readChanges(tx, actor, first.cursor, req.query.limit, kinds));
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
