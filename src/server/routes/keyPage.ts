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
import {
  type FormBody,
  many,
  one,
  type SessionContext,
  sessionBeforeInput,
  sessionGuard,
} from "../http/session.ts";
import { Empty, op, Text } from "../openapi/describe.ts";
import { KeyEnvelope, MintedKey, TxtApiKey, User, VaultCredential } from "../openapi/records.ts";
import type { RouteDeps } from "./deps.ts";
import { renderKeyPage } from "./keyPageHtml.ts";
import { MAX_INTEGER } from "./schemas.ts";
import { signInRoutes } from "./signIn.ts";
import { signInLinkRoutes } from "./signInLink.ts";

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
    const guard = sessionGuard(store);
    const { loadSession, requireSession, requireChange } = guard;
    sessionBeforeInput(app, guard);
    await app.register(signInRoutes(deps));
    await app.register(signInLinkRoutes(deps));

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
        "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
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

    const html = Text("The key page (HTML).", ["text/html"]);
    const redirect = Empty("See Other: back to the key page.", { Location: Type.String() });
    const form = { consumes: ["application/x-www-form-urlencoded"] };
    const s = (
      id: string,
      summary: string,
      ok: Record<number, unknown>,
      errors?: Record<number, string | undefined>,
    ) => op({ id, summary, ok, area: "auth", surface: "session", errors });
    const seeOther = (reply: FastifyReply, to: string) => reply.code(303).header("location", to).send();

    const pageDoc = op({
      id: "keyPage",
      area: "auth",
      surface: "signIn",
      summary: "The key page: sign in, then mint, rotate and revoke API keys and vault an AI key.",
      ok: { 200: html },
    });
    app.get("/keys", { ...pub, schema: pageDoc }, async (req, reply) => page(reply, await loadSession(req)));

    // --- The page's forms (urlencoded, CSRF token in `_csrf`) ---

    app.post(
      "/keys",
      { ...pub, schema: { ...s("keyPageMint", "Mint a key from the page's form.", { 200: html }), ...form } },
      async (req, reply) => {
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
      },
    );

    const rotateFormDoc = s("keyPageRotate", "Rotate a key from the page's form.", { 200: html });
    app.post(
      "/keys/:id/rotate",
      { ...pub, schema: { params: KeyParams, ...rotateFormDoc, ...form } },
      async (req, reply) => {
        const ctx = await requireChange(req);
        const form = (req.body ?? {}) as FormBody;
        const grace = Number(one(form.grace) ?? 86400);
        const minted = await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace));
        return page(reply, ctx, { newKey: minted, rotated: minted.rotated });
      },
    );

    const revokeFormDoc = s("keyPageRevoke", "Revoke a key from the page's form.", { 303: redirect });
    app.post(
      "/keys/:id/revoke",
      { ...pub, schema: { params: KeyParams, ...revokeFormDoc, ...form } },
      async (req, reply) => {
        const ctx = await requireChange(req);
        await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id));
        return seeOther(reply, "/keys");
      },
    );

    const vaultFormDoc = s("keyPageVaultPut", "Vault an AI key from the page's form.", { 303: redirect });
    app.post(
      "/keys/vault/:name",
      { ...pub, schema: { params: VaultParams, ...vaultFormDoc, ...form } },
      async (req, reply) => {
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
      },
    );

    const vaultDeleteFormDoc = s("keyPageVaultDelete", "Delete a vaulted secret from the page's form.", {
      303: redirect,
    });
    app.post(
      "/keys/vault/:name/delete",
      { ...pub, schema: { params: VaultParams, ...vaultDeleteFormDoc, ...form } },
      async (req, reply) => {
        const ctx = await requireChange(req);
        await store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
        return seeOther(reply, "/keys");
      },
    );

    // --- The same operations as JSON (session cookie + X-CSRF-Token), for scripts in the page ---

    const sessionDoc = s("getSession", "The signed-in user and the CSRF token for changes (X-CSRF-Token).", {
      200: Type.Object({
        user: User,
        csrfToken: Type.String(),
        expiresAt: Type.String({ format: "date-time" }),
      }),
    });
    app.get("/api/me/session", { ...pub, schema: sessionDoc }, async (req) => {
      const ctx = await requireSession(req);
      return {
        user: { id: ctx.user.id, email: ctx.user.email, name: ctx.user.name },
        csrfToken: ctx.session.csrf_token,
        expiresAt: ctx.session.expires_at,
      };
    });

    const keysDoc = s("listKeys", "Your API keys (records only, never the keys).", {
      200: Type.Object({ keys: Type.Array(TxtApiKey) }),
    });
    app.get("/api/me/keys", { ...pub, schema: keysDoc }, async (req) => {
      const ctx = await requireSession(req);
      return { keys: await store.read((tx) => listUserKeys(tx, ctx.user.id)) };
    });

    const mintDoc = s(
      "createKey",
      "Mint an API key (`scopes`, `expiresIn` seconds); the key is shown once.",
      { 201: MintedKey },
    );
    app.post("/api/me/keys", { ...pub, schema: { body: KeyCreateBody, ...mintDoc } }, async (req, reply) => {
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
      {
        ...pub,
        schema: {
          params: KeyParams,
          body: KeyPatchBody,
          ...s("updateKey", "Relabel a key.", { 200: KeyEnvelope }),
        },
      },
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
      {
        ...pub,
        schema: {
          params: KeyParams,
          body: Type.Optional(RotateBody),
          ...s("rotateKey", "Rotate: a new key with the same scopes; the old one works for `graceSeconds`.", {
            201: MintedKey,
          }),
        },
      },
      async (req, reply) => {
        const ctx = await requireChange(req);
        const grace = req.body?.graceSeconds;
        return reply
          .code(201)
          .send(await store.transaction((tx) => rotateUserKey(tx, ctx.user.id, req.params.id, grace)));
      },
    );

    const revokeDoc = s("revokeKey", "Revoke a key at once.", { 200: KeyEnvelope });
    app.delete("/api/me/keys/:id", { ...pub, schema: { params: KeyParams, ...revokeDoc } }, async (req) => {
      const ctx = await requireChange(req);
      return { key: await store.transaction((tx) => revokeUserKey(tx, ctx.user.id, req.params.id)) };
    });

    const vaultDoc = s("listVault", "Your vaulted credentials (hints only).", {
      200: Type.Object({ credentials: Type.Array(VaultCredential) }),
    });
    app.get("/api/me/vault", { ...pub, schema: vaultDoc }, async (req) => {
      const ctx = await requireSession(req);
      return { credentials: await store.read((tx) => listVault(tx, ctx.user.id)) };
    });

    app.put(
      "/api/me/vault/:name",
      {
        ...pub,
        schema: {
          params: VaultParams,
          body: VaultBody,
          ...s("putVaultCredential", "Vault a secret (e.g. `ai-key`), encrypted at rest.", {
            200: Type.Object({ credential: VaultCredential }),
          }),
        },
      },
      async (req) => {
        const ctx = await requireChange(req);
        return {
          credential: await store.transaction((tx) =>
            putVaultSecret(tx, ctx.user.id, req.params.name, req.body, hub.cipher),
          ),
        };
      },
    );

    const vaultDeleteDoc = s("deleteVaultCredential", "Delete a vaulted secret.", {
      200: Type.Object({ name: Type.String(), deleted: Type.Boolean() }),
    });
    app.delete(
      "/api/me/vault/:name",
      { ...pub, schema: { params: VaultParams, ...vaultDeleteDoc } },
      async (req) => {
        const ctx = await requireChange(req);
        return store.transaction((tx) => deleteVaultSecret(tx, ctx.user.id, req.params.name));
      },
    );
  };
}
