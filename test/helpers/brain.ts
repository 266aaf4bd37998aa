// Brain test setup: a user's own AI key (vaulted, as the key page saves it) and a user's plan.
import { putVaultSecret } from "../../src/server/domain/vault.ts";
import type { FakeOpenAi } from "./fakeOpenAi.ts";
import type { TestServer, TestUser } from "./server.ts";

export async function setAiKey(
  t: TestServer,
  user: TestUser,
  secret: string,
  options: { baseUrl?: string; model?: string } = {},
) {
  await t.server.store.transaction((tx) =>
    putVaultSecret(tx, user.id, "ai-key", { secret, label: "test", ...options }, t.server.identity.cipher),
  );
}

export async function setPlan(t: TestServer, user: TestUser, plan: "free" | "pro") {
  await t.server.store.transaction((tx) => tx.users.setPlan(user.id, plan));
}

/** The server's own provider: the fake, with every model configured. */
export function operatorOf(fake: FakeOpenAi, key = "sk-operator-secret-0001") {
  return {
    operator: {
      baseUrl: fake.baseUrl,
      apiKey: key,
      chatModel: "fake-chat",
      embeddingModel: "fake-embed",
      transcriptionModel: "whisper-fake",
    },
  };
}

/** A snapshot of what a user's workspace holds, to show that nothing changed. */
export async function snapshot(user: TestUser) {
  const files = (await user.api.get("/api/me/files")).body;
  const changes = (await user.api.get("/api/v1/changes?cursor=0&limit=1000")).body;
  return { files: files.files, folders: files.folders, cursor: changes.cursor };
}
