// The configured identity provider as txtfs sees it: OpenID discovery, access-token verification
// against its JWKS (jose caches the key set, so the hot path does no I/O), and the token endpoint
// for the key page's code exchange and for refreshing the tokens the server holds.
import { createRemoteJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";

export interface IdentityConfig {
  /** The one allowed `identity.provider` value, e.g. `dev` or `auth0`. */
  name: string;
  issuer: string;
  clientId: string;
  /** The access-token audience (resource indicator) that means "the txtfs API". */
  audience: string;
  /** Leeway for exp/nbf in seconds (default 30). */
  clockToleranceSeconds?: number;
}

export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  revocation_endpoint?: string;
  userinfo_endpoint?: string;
  realtime_sync_endpoint?: string;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** ISO time the access token expires. */
  expiresAt: string;
  scope: string;
}

/** Why a token was refused; the auth layer turns these into 401 bodies. */
export class TokenRejected extends Error {
  readonly code: "token_expired" | "invalid_token";
  constructor(code: "token_expired" | "invalid_token", message: string) {
    super(message);
    this.code = code;
  }
}

/** The token endpoint refused (invalid_grant and friends) or could not be reached. */
export class TokenEndpointError extends Error {
  readonly oauthError: string;
  readonly status: number;
  constructor(status: number, oauthError: string, message: string) {
    super(message);
    this.status = status;
    this.oauthError = oauthError;
  }
}

export interface VerifiedToken {
  issuer: string;
  subject: string;
  scopes: string[];
  clientId: string | null;
  jti: string | null;
  expiresAt: string;
  email: string | null;
  username: string | null;
  name: string | null;
  wallet: Record<string, unknown> | null;
}

const TIMEOUT_MS = 5000;

export class IdentityProvider {
  readonly config: IdentityConfig;
  private metadataPromise: Promise<ProviderMetadata> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  /**
   * Tokens already verified, until they expire: a signature check per request would cost the hot
   * path (304s) several times a key lookup. Keyed by the whole token, so nothing unverified matches.
   */
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: 10_000 });

  constructor(config: IdentityConfig) {
    this.config = { ...config, issuer: config.issuer.replace(/\/$/, "") };
  }

  /** OpenID discovery, once (retried after a failure). The metadata must name our issuer exactly. */
  metadata(): Promise<ProviderMetadata> {
    this.metadataPromise ??= (async () => {
      const res = await fetch(`${this.config.issuer}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`OpenID discovery of ${this.config.issuer} answered ${res.status}`);
      const meta = (await res.json()) as ProviderMetadata;
      if (meta.issuer?.replace(/\/$/, "") !== this.config.issuer) {
        throw new Error(`discovery names issuer ${meta.issuer}, expected ${this.config.issuer}`);
      }
      return meta;
    })();
    this.metadataPromise.catch(() => {
      this.metadataPromise = undefined;
    });
    return this.metadataPromise;
  }

  /** Verifies signature, `iss` (exact), `aud` (ours), `exp`/`nbf`; returns who and what scopes. */
  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.verified.get(token);
    const leeway = (this.config.clockToleranceSeconds ?? 30) * 1000;
    if (cached && Date.parse(cached.expiresAt) + leeway > Date.now()) return cached;
    const result = await this.verifyFresh(token);
    this.verified.set(token, result);
    return result;
  }

  private async verifyFresh(token: string): Promise<VerifiedToken> {
    let payload: JWTPayload;
    // A token of another issuer is refused before any key lookup: its unknown `kid` would otherwise
    // make jose refetch our provider's key set.
    let claimedIssuer: unknown;
    try {
      claimedIssuer = decodeJwt(token).iss;
    } catch {
      throw new TokenRejected("invalid_token", "The access token is not a well-formed JWT.");
    }
    if (typeof claimedIssuer !== "string" || claimedIssuer.replace(/\/$/, "") !== this.config.issuer) {
      throw new TokenRejected("invalid_token", "The access token's iss claim names another issuer.");
    }
    try {
      if (!this.jwks) {
        const meta = await this.metadata();
        this.jwks = createRemoteJWKSet(new URL(meta.jwks_uri), { timeoutDuration: TIMEOUT_MS });
      }
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.config.issuer,
        audience: this.config.audience,
        algorithms: ["RS256", "PS256", "ES256", "EdDSA"],
        clockTolerance: this.config.clockToleranceSeconds ?? 30,
        requiredClaims: ["sub", "exp"],
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired)
        throw new TokenRejected("token_expired", "The access token has expired.");
      if (err instanceof errors.JWTClaimValidationFailed) {
        throw new TokenRejected(
          "invalid_token",
          `The access token's ${err.claim} claim is not accepted here.`,
        );
      }
      if (err instanceof errors.JOSEError) {
        throw new TokenRejected("invalid_token", "The access token's signature or format is not valid.");
      }
      throw new TokenRejected("invalid_token", "The access token could not be verified.");
    }
    const scope = payload.scope;
    const scopes = typeof scope === "string" ? scope.split(" ").filter(Boolean) : [];
    const str = (v: unknown) => (typeof v === "string" && v ? v : null);
    return {
      issuer: String(payload.iss),
      subject: String(payload.sub),
      scopes,
      clientId: str(payload.client_id),
      jti: str(payload.jti),
      expiresAt: new Date(Number(payload.exp) * 1000).toISOString(),
      email: str(payload.email),
      username: str(payload.preferred_username),
      name: str(payload.name),
      wallet:
        payload.wallet && typeof payload.wallet === "object"
          ? (payload.wallet as Record<string, unknown>)
          : null,
    };
  }

  private async tokenRequest(form: Record<string, string>): Promise<TokenSet> {
    const meta = await this.metadata();
    let res: Response;
    try {
      res = await fetch(meta.token_endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams({ client_id: this.config.clientId, ...form }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new TokenEndpointError(0, "unreachable", `token endpoint unreachable: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok || typeof body.access_token !== "string") {
      throw new TokenEndpointError(
        res.status,
        String(body.error ?? "invalid_response"),
        String(body.error_description ?? body.error ?? `token endpoint answered ${res.status}`),
      );
    }
    return {
      accessToken: body.access_token,
      refreshToken:
        typeof body.refresh_token === "string" ? body.refresh_token : (form.refresh_token ?? null),
      expiresAt: new Date(Date.now() + Number(body.expires_in ?? 3600) * 1000).toISOString(),
      scope: String(body.scope ?? ""),
    };
  }

  exchangeCode(code: string, redirectUri: string, codeVerifier: string): Promise<TokenSet> {
    return this.tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
      resource: this.config.audience,
    });
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.tokenRequest({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      resource: this.config.audience,
    });
  }
}
