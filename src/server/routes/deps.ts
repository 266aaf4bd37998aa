import type { Store } from "../../store/store.ts";

/** What route plugins need from the app. */
export interface RouteDeps {
  store: Store;
  /** Resolves when the server starts shutting down (ends long-polls early). */
  closing: Promise<void>;
}
