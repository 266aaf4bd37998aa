// One-time sign-in links (http/signInLinks.ts): `txtfs open keys|dashboard|playground` proves it
// holds an all-scopes API key, gets a link, and the browser that opens it is signed in as that user.
// Registered inside the key page plugin (cookies are parsed there).
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ServiceError } from "../domain/errors.ts";
import { KEY_SCOPES } from "../domain/scopes.ts";
import { createSession, SESSION_COOKIE, SESSION_TTL_MS, setCookie } from "../http/session.ts";
import { LINK_MAX_TTL_SECONDS, LINK_PAGES, type LinkPage, SignInLinks } from "../http/signInLinks.ts";
import { Empty, op } from "../openapi/describe.ts";
import type { RouteDeps } from "./deps.ts";

const pages = Object.keys(LINK_PAGES) as LinkPage[];

const LinkBody = Type.Object(
  {
    /** The page the browser lands on once signed in. */
    page: Type.Optional(Type.Union(pages.map((p) => Type.Literal(p)))),
    /** Seconds the link stays valid (at most 60). */
    expiresIn: Type.Optional(Type.Integer({ minimum: 1, maximum: LINK_MAX_TTL_SECONDS })),
  },
  { additionalProperties: false },
);
const SignInLink = Type.Object({
  url: Type.String({
    description: "Open once, in the browser to sign in; absolute, on this request's host.",
  }),
  path: Type.String({ description: "The same link without scheme and host (join it to the URL you use)." }),
  page: Type.Union(pages.map((p) => Type.Literal(p))),
  expiresAt: Type.String({ format: "date-time" }),
});

export function signInLinkRoutes({ store }: RouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const links = new SignInLinks();

    const mintDoc = op({
      id: "createSignInLink",
      area: "auth",
      summary:
        "A one-time link that signs a browser in as you (key page, dashboard, playground); needs an API key with every scope.",
      ok: { 201: SignInLink },
      errors: {
        403: "The key lacks a scope (a link needs every one), or the credential is an OAuth access token.",
      },
    });
    app.post(
      "/api/me/session/link",
      { config: { scope: "any" }, schema: { body: Type.Optional(LinkBody), ...mintDoc } },
      async (req, reply) => {
        const actor = req.actor!;
        const missing = KEY_SCOPES.filter((s) => !actor.scopes.has(s));
        // A browser session can mint keys of any scope: only a credential that already holds them all
        // may open one, and only an API key (an access token's grant is the provider's to make).
        if (actor.identityId || missing.length > 0) {
          throw new ServiceError(
            403,
            "insufficient_scope",
            actor.identityId
              ? "A sign-in link is made for an API key, not an OAuth access token."
              : `A sign-in link needs a key with every scope; this one lacks ${missing.join(", ")}.`,
            "Use the key that came with the service (txtfs mount --serve keeps it in DATA/mount.key; txtfs serve prints the first one), or sign in on /keys.",
            { requiredScopes: [...KEY_SCOPES] },
          );
        }
        const page = req.body?.page ?? "keys";
        const { token, expiresAt } = links.mint(actor.userId, page, req.body?.expiresIn);
        const path = `/auth/link?token=${token}`;
        return reply
          .code(201)
          .header("cache-control", "no-store")
          .send({
            url: `${req.protocol}://${req.host}${path}`,
            path,
            page,
            expiresAt: new Date(expiresAt).toISOString(),
          });
      },
    );

    const openDoc = op({
      id: "openSignInLink",
      area: "auth",
      surface: "signIn",
      summary:
        "Opens a one-time sign-in link: sets the session cookie, then redirects to the page without the token.",
      ok: { 303: Empty("Signed in: to the link's page.", { Location: Type.String() }) },
      errors: { 400: "The link is unknown, already used or expired (sign_in_failed)." },
    });
    app.get(
      "/auth/link",
      {
        config: { scope: "public" },
        schema: { querystring: Type.Object({ token: Type.String({ maxLength: 64 }) }), ...openDoc },
      },
      async (req, reply) => {
        const link = /^[0-9A-Za-z]{43}$/.test(req.query.token) ? links.take(req.query.token) : null;
        reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer");
        if (!link) {
          throw new ServiceError(
            400,
            "sign_in_failed",
            "Sign-in failed: the link is unknown, already used or expired (links work once, for a minute).",
            "Ask for a new one: txtfs open keys (or dashboard, playground).",
          );
        }
        const raw = await store.transaction(async (tx) =>
          (await tx.users.byId(link.userId)) ? createSession(tx, link.userId, null) : null,
        );
        if (!raw)
          throw new ServiceError(
            400,
            "sign_in_failed",
            "Sign-in failed: the account is gone.",
            "Use another key.",
          );
        setCookie(req, reply, SESSION_COOKIE, raw, SESSION_TTL_MS / 1000);
        return reply.code(303).header("location", LINK_PAGES[link.page]).send();
      },
    );
  };
}
