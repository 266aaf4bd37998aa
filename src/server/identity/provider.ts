// The configured identity provider as txtfs sees it: OpenID discovery, the key page's code
// exchange (authorization response checks: state, RFC 9207 `iss`, error answers) and refreshing
// the tokens the server holds, through oauth4webapi; access-token verification against its JWKS
// through jose (which caches the key set, so the hot path does no I/O).
import { createRemoteJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from "jose";
import { LRUCache } from "lru-cache";
import * as oauth from "oauth4webapi";

export interface IdentityConfig {
  /** The one allowed `identity.provider` value, e.g. `dev` or `auth0`. */
  name: string;
  issuer: string;
  clientId: string;
  /** The access-token audience (resource indicator) that means "the txtfs API". */
  audience: string;
  /**
   * Other audiences that mean this service: its MCP endpoint's URL, which MCP clients send as
   * `resource` (RFC 8707) after reading /.well-known/oauth-protected-resource.
   */
  resources?: readonly string[];
  /** Leeway for exp/nbf in seconds (default 30). */
  clockToleranceSeconds?: number;
}

export interface ProviderMetadata extends oauth.AuthorizationServer {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
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

/** The authorization response (the redirect back to us) is an error answer or fails a check. */
export class CallbackRejected extends Error {
  readonly oauthError: string | null;
  constructor(message: string, oauthError: string | null = null) {
    super(message);
    this.oauthError = oauthError;
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

  /** How oauth4webapi reaches the provider: a deadline, and plain HTTP only for an http: issuer. */
  private httpOptions() {
    return {
      signal: () => AbortSignal.timeout(TIMEOUT_MS),
      [oauth.allowInsecureRequests]: this.config.issuer.startsWith("http:"),
    };
  }

  private get client(): oauth.Client {
    return {
      client_id: this.config.clientId,
      [oauth.clockTolerance]: this.config.clockToleranceSeconds ?? 30,
    };
  }

  /** OpenID discovery, once (retried after a failure). The metadata must name our issuer exactly. */
  metadata(): Promise<ProviderMetadata> {
    this.metadataPromise ??= (async () => {
      const issuer = new URL(this.config.issuer);
      const res = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...this.httpOptions() });
      let meta: oauth.AuthorizationServer;
      try {
        meta = await oauth.processDiscoveryResponse(issuer, res);
      } catch (err) {
        throw new Error(`OpenID discovery of ${this.config.issuer} failed: ${(err as Error).message}`);
      }
      if (!meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri)
        throw new Error(
          `OpenID discovery of ${this.config.issuer} names no authorization, token or JWKS endpoint`,
        );
      return meta as ProviderMetadata;
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
        audience: [this.config.audience, ...(this.config.resources ?? [])],
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

  /** Runs a token endpoint request and reads its answer; failures become TokenEndpointError. */
  private async tokenRequest(
    send: (meta: ProviderMetadata) => Promise<Response>,
    read: (meta: ProviderMetadata, res: Response) => Promise<oauth.TokenEndpointResponse>,
    previousRefreshToken: string | null,
  ): Promise<TokenSet> {
    const meta = await this.metadata();
    let res: Response;
    try {
      res = await send(meta);
    } catch (err) {
      throw new TokenEndpointError(0, "unreachable", `token endpoint unreachable: ${(err as Error).message}`);
    }
    let body: oauth.TokenEndpointResponse;
    try {
      body = await read(meta, res);
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError)
        throw new TokenEndpointError(err.status, err.error, err.error_description ?? err.error);
      throw new TokenEndpointError(
        res.status >= 400 ? res.status : 502,
        "invalid_response",
        `the token endpoint's answer is not valid: ${(err as Error).message}`,
      );
    }
    return {
      accessToken: body.access_token,
      refreshToken: body.refresh_token ?? previousRefreshToken,
      expiresAt: new Date(Date.now() + (body.expires_in ?? 3600) * 1000).toISOString(),
      scope: body.scope ?? "",
    };
  }

  /**
   * The key page's sign-in, step 2: checks the authorization response the provider redirected
   * with (`state`, the RFC 9207 `iss`, an `error` answer), then exchanges its code with the PKCE
   * verifier for tokens meant for our API (`resource`).
   */
  async exchangeCallback(
    callback: URLSearchParams,
    expectedState: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<TokenSet> {
    const meta = await this.metadata();
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(meta, this.client, callback, expectedState);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError)
        throw new CallbackRejected(
          `the identity provider said ${err.error}${err.error_description ? `: ${err.error_description}` : ""}`,
          err.error,
        );
      throw new CallbackRejected(`the authorization response is not valid (${(err as Error).message})`);
    }
    return this.tokenRequest(
      (m) =>
        oauth.authorizationCodeGrantRequest(m, this.client, oauth.None(), params, redirectUri, codeVerifier, {
          additionalParameters: { resource: this.config.audience },
          ...this.httpOptions(),
        }),
      (m, res) => oauth.processAuthorizationCodeResponse(m, this.client, res),
      null,
    );
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.tokenRequest(
      (m) =>
        oauth.refreshTokenGrantRequest(m, this.client, oauth.None(), refreshToken, {
          additionalParameters: { resource: this.config.audience },
          ...this.httpOptions(),
        }),
      (m, res) => oauth.processRefreshTokenResponse(m, this.client, res),
      refreshToken,
    );
  }
}
