import type { Store } from "../../store/store.ts";
import type { AttachmentLimits } from "../domain/attachments/rules.ts";
import type { ProviderPool } from "../domain/brain/capability.ts";
import type { IdentityHub } from "../identity/hub.ts";

/** What route plugins need from the app. */
export interface RouteDeps {
  store: Store;
  /** Resolves when the server starts shutting down (ends long-polls early). */
  closing: Promise<void>;
  /** Sign-in: identity provider, dev provider, vault cipher. */
  identity: IdentityHub;
  /** The context brain's AI providers (the operator's, and users' own keys). */
  brain: ProviderPool;
  /** Attachments: the size of one, and the quota of an account. */
  attachments: AttachmentLimits;
}
