// The parts of oidc-provider 9 (no bundled types; @types/oidc-provider is not installed) that the
// dev identity provider uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Ctx {
    type: string;
    body: unknown;
  }

  export interface Configuration {
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys: string[] };
    scopes?: string[];
    claims?: Record<string, string[]>;
    pkce?: { required?: (ctx: Ctx, client: unknown) => boolean };
    features?: Record<string, Record<string, unknown>>;
    discovery?: Record<string, unknown>;
    extraTokenClaims?: (
      ctx: Ctx,
      token: { accountId?: string },
    ) => Promise<Record<string, unknown> | undefined>;
    findAccount?: (
      ctx: Ctx,
      sub: string,
    ) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> } | undefined>;
    interactions?: { url: (ctx: Ctx, interaction: { uid: string }) => string };
    ttl?: Record<string, number>;
    rotateRefreshToken?: boolean;
    renderError?: (ctx: Ctx, out: Record<string, unknown>, error: unknown) => Promise<void>;
  }

  interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId: string };
    grantId?: string;
  }

  interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(indicator: string, scope: string): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: {
      new (init: { accountId: string; clientId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
}
