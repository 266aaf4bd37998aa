// The key page (/keys) and key management: with the `session` cookie of a web sign-in (signIn.ts)
// — and a CSRF token on every change — a person mints, lists, relabels, rotates and revokes API
// keys and vaults an AI key, as HTML forms or as JSON. The cookie authorizes nothing else.
import fastifyCookie from "@fastify/cookie";
import fastifyFormbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { parseDuration } from "../../lib/time.ts";
import { ServiceError } from "../domain/errors.ts";
import { listIdentities } from "../domain/identities.ts";
import {
  listUserKeys,
  mintUserKey,
  relabelUserKey,
  revokeUserKey,
  rotateUserKey,
} from "../domain/keyManagement.ts";
import { KEY_SCOPES } from "../domain/scopes.ts";
import { deleteVaultSecret, listVault, putVaultSecret } from "../domain/vault.ts";
import { type FormBody, many, one, type SessionContext, sessionGuard } from "../http/session.ts";
import type { RouteDeps } from "./deps.ts";
import { renderKeyPage } from "./keyPageHtml.ts";
import { MAX_INTEGER } from "./schemas.ts";
import { signInRoutes } from "./signIn.ts";

const DEFAULT_SCOPES = ["files:read", "files:write", "folders:read", "folders:write"];

const KeyCreateBody = Type.Object(
  {
    label: Type.Optional(Type.String()),
    scopes: Type.Optional(Type.Array(Type.String())),
    /** Seconds from now; omitted or null = never expires. */
    expiresIn: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_INTEGER }), Type.Null()])),
  },
  { additionalProperties: false },
);
const KeyPatchBody = Type.Object({ label: Type.String() }, { additionalProperties: false });
const RotateBody = Type.Object(
  { graceSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INTEGER })) },
  { additionalProperties: false },
);
const VaultBody = Type.Object(
  {
    secret: Type.String(),
    label: Type.Optional(Type.String()),
    /** For the AI key: the user's own OpenAI-compatible server (default: the operator's, or OpenAI). */
    baseUrl: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const VaultParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

export function keyPageRoutes(deps: RouteDeps): FastifyPluginAsyncTypebox {
  const { store, identity: hub } = deps;
  return async (app) => {
    const pub = { config: { scope: "public" as const } };

    // Cookies and HTML forms (urlencoded bodies) for the routes of this plugin only.
    await app.register(fastifyCookie);
    await app.register(fastifyFormbody);
    const { loadSession, requireSession, requireChange } = sessionGuard(store);
    await app.register(signInRoutes(deps));

    async function page(
      reply: FastifyReply,
      ctx: SessionContext | null,
      extra: Parameters<typeof renderKeyPage>[0]["extra"] = {},
    ) {
      reply
        .header("cache-control", "no-store")
        .header("x-frame-options", "DENY")
        .header("referrer-policy", "no-referrer");
      reply.header(
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      );
      reply.type("text/html; charset=utf-8");
      if (!ctx) {
        return renderKeyPage({ signedIn: null, providerName: hub.provider?.config.name ?? null, extra });
      }
      const data = await store.read(async (tx) => ({
        keys: await listUserKeys(tx, ctx.user.id),
        identities: await listIdentities(tx, ctx.user.id),
        vault: await listVault(tx, ctx.user.id),
      }));
      return renderKeyPage({
        signedIn: {
          user: ctx.user,
          csrf: ctx.session.csrf_token,
          ...data,
          scopes: KEY_SCOPES,
          defaultScopes: DEFAULT_SCOPES,
        },
        providerName: hub.provider?.config.name ?? null,
        extra,
      });
    }

    const seeOther = (reply: FastifyReply, to: string) => reply.code(303).header("location", to).send();

    app.get("/keys", pub, async (req, reply) => page(reply, await loadSession(req)));

    // --- The page's forms (urlencoded, CSRF token in `_csrf`) ---

    app.post("/keys", pub, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as FormBody;
      const expires = one(form.expires) ?? "90d";
      const expiresIn = expires === "never" ? undefined : (parseDuration(expires) ?? Number.NaN);
      if (Number.isNaN(expiresIn)) {
        throw new ServiceError(
          400,
          "validation_failed",
          "expires: use a duration like 30d, or never.",
          "Pick an expiry from the list.",
          [{ field: "expires", code: "invalid", message: "not a duration" }],
        );
      }
      const minted = await store.transaction((tx) =>
        mintUserKey(tx, ctx.user.id, { label: one(form.label), scopes: many(form.scopes), expiresIn }),
      );
      return page(reply, ctx, { newKey: minted });
    });

    app.post("/keys/:id/rotate", { ...pub, schema: { params: KeyParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as FormBody;
      const grace = Number(one(form.grace) ?? 86400);
      const minted = await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace));
      return page(reply, ctx, { newKey: minted, rotated: minted.rotated });
    });

    app.post("/keys/:id/revoke", { ...pub, schema: { params: KeyParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id));
      return seeOther(reply, "/keys");
    });

    app.post("/keys/vault/:name", { ...pub, schema: { params: VaultParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const form = (req.body ?? {}) as FormBody;
      await store.transaction((tx) =>
        putVaultSecret(
          tx,
          ctx.user.id,
          req.params.name,
          {
            secret: one(form.secret) ?? "",
            label: one(form.label),
            baseUrl: one(form.baseUrl),
            model: one(form.model),
          },
          hub.cipher,
        ),
      );
      return seeOther(reply, "/keys");
    });

    app.post("/keys/vault/:name/delete", { ...pub, schema: { params: VaultParams } }, async (req, reply) => {
      const ctx = await requireChange(req);
      await store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
      return seeOther(reply, "/keys");
    });

    // --- The same operations as JSON (session cookie + X-CSRF-Token), for scripts in the page ---

    app.get("/api/me/session", pub, async (req) => {
      const ctx = await requireSession(req);
      return {
        user: { id: ctx.user.id, email: ctx.user.email, name: ctx.user.name },
        csrfToken: ctx.session.csrf_token,
        expiresAt: ctx.session.expires_at,
      };
    });

    app.get("/api/me/keys", pub, async (req) => {
      const ctx = await requireSession(req);
      return { keys: await store.read((tx) => listUserKeys(tx, ctx.user.id)) };
    });

    app.post("/api/me/keys", { ...pub, schema: { body: KeyCreateBody } }, async (req, reply) => {
      const ctx = await requireChange(req);
      const b = req.body;
      const minted = await store.transaction((tx) =>
        mintUserKey(tx, ctx.user.id, {
          label: b.label,
          scopes: b.scopes ?? DEFAULT_SCOPES,
          expiresIn: b.expiresIn ?? undefined,
        }),
      );
      return reply.code(201).send(minted);
    });

    app.patch(
      "/api/me/keys/:id",
      { ...pub, schema: { params: KeyParams, body: KeyPatchBody } },
      async (req) => {
        const ctx = await requireChange(req);
        return {
          key: await store.transaction((tx) =>
            relabelUserKey(tx, ctx.user.id, req.params.id, req.body.label),
          ),
        };
      },
    );

    app.post(
      "/api/me/keys/:id/rotate",
      { ...pub, schema: { params: KeyParams, body: Type.Optional(RotateBody) } },
      async (req, reply) => {
        const ctx = await requireChange(req);
        const grace = req.body?.graceSeconds;
        return reply
          .code(201)
          .send(await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace)));
      },
    );

    app.delete("/api/me/keys/:id", { ...pub, schema: { params: KeyParams } }, async (req) => {
      const ctx = await requireChange(req);
      return { key: await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id)) };
    });

    app.get("/api/me/vault", pub, async (req) => {
      const ctx = await requireSession(req);
      return { credentials: await store.read((tx) => listVault(tx, ctx.user.id)) };
    });

    app.put(
      "/api/me/vault/:name",
      { ...pub, schema: { params: VaultParams, body: VaultBody } },
      async (req) => {
        const ctx = await requireChange(req);
        return {
          credential: await store.transaction((tx) =>
            putVaultSecret(tx, ctx.user.id, req.params.name, req.body, hub.cipher),
          ),
        };
      },
    );

    app.delete("/api/me/vault/:name", { ...pub, schema: { params: VaultParams } }, async (req) => {
      const ctx = await requireChange(req);
      return store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
    });
  };
}
