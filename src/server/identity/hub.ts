// Everything sign-in needs at request time, in one place the app and the routes share. Mutable on
// purpose: the dev provider's issuer (its URL) is only known once the server listens.
import type { DevIdp } from "./devIdp.ts";
import type { IdentityProvider } from "./provider.ts";
import type { VaultCipher } from "./vaultCipher.ts";

export interface IdentityHub {
  /** The configured identity provider, if any (none: API keys only). */
  provider?: IdentityProvider;
  /** The in-process dev provider, served under /dev-idp (`txtfs serve --dev-idp`). */
  devIdp?: DevIdp;
  cipher: VaultCipher;
}
