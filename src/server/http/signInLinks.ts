// One-time sign-in links: a holder of an all-scopes API key (the local user's, in local use) asks for
// a short-lived token that a browser trades, once, for the `session` cookie, as Jupyter's token URL
// does. Only each token's SHA-256 is kept, in this process's memory (a link opens on the server that
// minted it); a token is gone once it is looked up, whether it was still valid or not.
import { randomBase62 } from "../../lib/ids.ts";
import { sha256 } from "./session.ts";

/** The pages a link may land on (never a URL given by the caller: no open redirect). */
export const LINK_PAGES = { keys: "/keys", dashboard: "/dashboard", playground: "/docs" } as const;
export type LinkPage = keyof typeof LINK_PAGES;

/** A link lives at most this long: it is for the browser the CLI opens right now. */
export const LINK_MAX_TTL_SECONDS = 60;
/** Links waiting at once; beyond, the oldest go (a caller cannot grow our memory). */
const MAX_PENDING = 256;

interface PendingLink {
  userId: string;
  page: LinkPage;
  expiresAt: number;
}

export class SignInLinks {
  private readonly pending = new Map<string, PendingLink>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** A new link's token (shown once) and when it expires. */
  mint(
    userId: string,
    page: LinkPage,
    ttlSeconds = LINK_MAX_TTL_SECONDS,
  ): { token: string; expiresAt: number } {
    this.purgeExpired();
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    const token = randomBase62(43);
    const expiresAt = this.now() + Math.min(ttlSeconds, LINK_MAX_TTL_SECONDS) * 1000;
    this.pending.set(sha256(token), { userId, page, expiresAt });
    return { token, expiresAt };
  }

  /** The link's user and page if the token is one of ours and still valid; it is used up either way. */
  take(token: string): { userId: string; page: LinkPage } | null {
    const key = sha256(token);
    const link = this.pending.get(key);
    this.pending.delete(key);
    if (!link || link.expiresAt <= this.now()) return null;
    return { userId: link.userId, page: link.page };
  }

  private purgeExpired(): void {
    const now = this.now();
    for (const [key, link] of this.pending) if (link.expiresAt <= now) this.pending.delete(key);
  }
}
