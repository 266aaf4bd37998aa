// discoverIdentityRealtime: asks the identity provider, with the token the server holds for the
// user's active identity, what realtime sync it offers, and answers it normalized. Refreshes the held
// token when it has expired; when that is impossible the user must sign in again.
import { nowIso } from "../../lib/time.ts";
import type { Store } from "../../store/store.ts";
import { ServiceError } from "../domain/errors.ts";
import { type HeldTokens, heldTokensOf, holdTokens } from "../domain/identities.ts";
import type { IdentityHub } from "./hub.ts";
import { TokenEndpointError } from "./provider.ts";

export interface RealtimeCapability {
  provider: string;
  issuer: string;
  configured: boolean;
  syncMode: string;
  syncServer: string | null;
  connectable: boolean;
  /** Where changes flow when realtime sync cannot be used: this service's durable change feed. */
  fallback: { store: "txtfs"; changes: string } | null;
  checkedAt: string;
}

const reauthError = (why: string) =>
  new ServiceError(
    401,
    "IDENTITY_REAUTH_REQUIRED",
    `Identity re-authentication required: ${why}.`,
    "Sign in again on the key page (/keys) or with txtfs login, then retry.",
  );

const discoveryFailed = (why: string) =>
  new ServiceError(
    502,
    "identity_discovery_failed",
    `The identity provider's realtime capability could not be discovered: ${why}.`,
    "Retry later; if it persists, check the identity provider's status.",
  );

/** Normalizes the provider's answer (`{realtime: {...}}` or the object itself). */
export function normalizeRealtime(
  raw: unknown,
): Pick<RealtimeCapability, "configured" | "syncMode" | "syncServer" | "connectable"> {
  const outer = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  const r = (outer.realtime && typeof outer.realtime === "object" ? outer.realtime : outer) as Record<
    string,
    unknown
  >;
  const configured = r.configured === true;
  const mode =
    typeof r.syncMode === "string" ? r.syncMode : typeof r.sync_mode === "string" ? r.sync_mode : "off";
  const serverRaw =
    typeof r.syncServer === "string" ? r.syncServer : typeof r.sync_server === "string" ? r.sync_server : "";
  const syncServer = serverRaw.trim() ? serverRaw.trim() : null;
  const syncMode = mode.trim().toLowerCase() || "off";
  return {
    configured,
    syncMode,
    syncServer,
    connectable: configured && syncMode !== "off" && syncServer !== null,
  };
}

export async function discoverRealtime(
  store: Store,
  hub: IdentityHub,
  userId: string,
): Promise<RealtimeCapability> {
  const identity = await store.read((tx) => tx.identities.active(userId));
  if (!identity) {
    throw new ServiceError(
      409,
      "identity_not_linked",
      "No identity is linked to this account.",
      "Sign in with the identity provider (the key page /keys, or txtfs login) to link one.",
    );
  }
  const provider = hub.provider;
  if (!provider || provider.config.issuer !== identity.issuer) {
    throw discoveryFailed(`the identity's issuer ${identity.issuer} is not this server's identity provider`);
  }
  /** Records on the identity that it needs a new sign-in (GET /api/me shows it), then refuses. */
  const reauth = async (why: string) => {
    await store.transaction((tx) => tx.identities.setVerificationError(identity.id, why, nowIso()));
    return reauthError(why);
  };
  let tokens: HeldTokens | null = heldTokensOf(identity, hub.cipher);
  if (!tokens) throw await reauth("no identity token is held");
  if (Date.parse(tokens.expiresAt) - 10_000 <= Date.now()) {
    if (!tokens.refreshToken) throw await reauth("the identity token expired and there is no refresh token");
    try {
      const fresh = await provider.refresh(tokens.refreshToken);
      tokens = {
        accessToken: fresh.accessToken,
        refreshToken: fresh.refreshToken,
        expiresAt: fresh.expiresAt,
      };
      const held = tokens;
      await store.transaction((tx) => holdTokens(tx, identity.id, held, hub.cipher));
    } catch (err) {
      if (err instanceof TokenEndpointError && err.status >= 400 && err.status < 500) {
        await store.transaction((tx) =>
          tx.identities.setVerificationError(identity.id, `refresh refused: ${err.oauthError}`, nowIso()),
        );
        throw reauth(`refresh refused: ${err.oauthError}`);
      }
      throw discoveryFailed(err instanceof Error ? err.message : String(err));
    }
  }
  let endpoint: string | undefined;
  try {
    endpoint = (await provider.metadata()).realtime_sync_endpoint;
  } catch (err) {
    throw discoveryFailed(err instanceof Error ? err.message : String(err));
  }
  let capability: ReturnType<typeof normalizeRealtime>;
  if (!endpoint) {
    capability = normalizeRealtime({ configured: false, syncMode: "off" }); // the provider offers none
  } else {
    let res: Response;
    try {
      res = await fetch(endpoint, {
        headers: { authorization: `Bearer ${tokens.accessToken}`, accept: "application/json" },
        signal: AbortSignal.timeout(5000),
      });
    } catch (err) {
      throw discoveryFailed(err instanceof Error ? err.message : String(err));
    }
    if (res.status === 401) throw await reauth("the identity provider refused the held token");
    if (!res.ok) throw discoveryFailed(`the provider answered ${res.status}`);
    const body = await res.json().catch(() => undefined);
    if (body === undefined) throw discoveryFailed("the provider's answer is not JSON");
    capability = normalizeRealtime(body);
  }
  return {
    provider: identity.provider,
    issuer: identity.issuer,
    ...capability,
    fallback: capability.connectable ? null : { store: "txtfs", changes: "/api/v1/changes" },
    checkedAt: nowIso(),
  };
}
