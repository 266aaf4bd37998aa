// A stand-in AI provider: a real HTTP server on 127.0.0.1 speaking the OpenAI-compatible wire format
// (chat completions with JSON-schema structured output and image input, embeddings, audio
// transcriptions, the model list), with its own 429, 500 and slow answers on demand. It records every
// request, so tests can check exactly what was sent to the provider.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** Parsed JSON, or for multipart the text fields (the file part as `{name, type, size}`). */
  body: any;
  /** The raw body as text (for "was this note ever sent" checks). */
  text: string;
}

export interface ChatCall {
  schemaName: string;
  system: string;
  user: string;
  /** The DATA document the brain quoted. */
  data: any;
  /** The REQUEST string (seed or prompt). */
  request: string;
  images: string[];
  model: string;
  raw: any;
}

type ChatHandler = (call: ChatCall) => unknown;

export interface FakeOpenAi {
  url: string;
  /** Base URL as a client configures it (`.../v1`). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** How long each request took here, from its first byte read to its answer sent (ms). */
  timings: { path: string; start: number; ms: number }[];
  chats(): ChatCall[];
  on(schemaName: string, handler: ChatHandler): void;
  /** The next `times` requests answer with this status (429 carries Retry-After). */
  fail(status: number, times?: number, retryAfter?: number): void;
  /** The next `times` requests wait this long before answering. */
  slow(ms: number, times?: number): void;
  transcript: string;
  /** Only this key is accepted (401 otherwise); null accepts any. */
  acceptKeys: string[] | null;
  reset(): void;
  close(): Promise<void>;
}

function parseChat(body: any): ChatCall {
  const system = body.messages?.find((m: any) => m.role === "system")?.content ?? "";
  const userMsg = body.messages?.find((m: any) => m.role === "user");
  const parts = Array.isArray(userMsg?.content)
    ? userMsg.content
    : [{ type: "text", text: userMsg?.content ?? "" }];
  const user = parts
    .filter((p: any) => p.type === "text")
    .map((p: any) => p.text)
    .join("\n");
  const images = parts.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url);
  const reqLine = /^REQUEST \(JSON string, from the user\): (.*)$/m.exec(user)?.[1];
  const dataLine = user.split("DATA (JSON, quoted notes; untrusted):\n")[1];
  return {
    schemaName: body.response_format?.json_schema?.name ?? "",
    system,
    user,
    data: dataLine ? JSON.parse(dataLine) : null,
    request: reqLine ? JSON.parse(reqLine) : "",
    images,
    model: body.model,
    raw: body,
  };
}

const DEFAULTS: Record<string, ChatHandler> = {
  ideation_note: (c) => ({
    title: c.request ? `Growing ${c.request.slice(0, 40)}` : "What is missing",
    content: `# Idea\n\nGrown from: ${c.request || "the workspace"}.\n`,
    context: "An idea grown by the brain",
    tags: ["idea"],
    folder: { existingFolderId: null, newFolderName: "Ideas" },
    connections: (c.data?.notes ?? [])
      .slice(0, 2)
      .map((n: any) => ({ fileId: n.id, reason: `builds on ${n.name}` })),
  }),
  ideation_growth: (c) => ({
    addition: "## More\n\nA further thought.",
    tags: ["grown"],
    connections: (c.data?.notes ?? [])
      .slice(0, 1)
      .map((n: any) => ({ fileId: n.id, reason: "continues it" })),
  }),
  workspace_proposals: (c) => ({
    summary: "Some notes lack context.",
    proposals: (c.data?.notes ?? []).map((n: any) => ({
      kind: "file_context",
      fileId: n.id,
      folderId: null,
      targetFileId: null,
      text: `About ${n.name}`,
      tags: null,
      folderName: null,
      reason: "it has no context",
    })),
  }),
  image_transcript: () => ({ title: "Whiteboard", text: "# Whiteboard\n\nShip on Friday." }),
  artifact: (c) => ({
    title: "Notes overview",
    summary: `Covers ${(c.data?.notes ?? []).length} notes.`,
    sections: (c.data?.notes ?? []).map((n: any) => ({
      heading: n.name,
      points: [String(n.excerpt).slice(0, 40)],
    })),
  }),
};

/** A deterministic embedding: words hashed into 32 dimensions (similar words, similar vectors). */
function embed(text: string): number[] {
  const v = new Array(32).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    v[h % 32] += 1;
  }
  return v;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const handlers: Record<string, ChatHandler> = { ...DEFAULTS };
  let failures: { status: number; retryAfter?: number }[] = [];
  let delays: number[] = [];
  const fake: FakeOpenAi = {
    url: "",
    baseUrl: "",
    requests: [],
    timings: [],
    transcript: "Remember to call the plumber on Monday.",
    acceptKeys: null,
    chats: () => fake.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => parseChat(r.body)),
    on: (name, handler) => {
      handlers[name] = handler;
    },
    fail: (status, times = 1, retryAfter) => {
      for (let i = 0; i < times; i++) failures.push({ status, retryAfter });
    },
    slow: (ms, times = 1) => {
      for (let i = 0; i < times; i++) delays.push(ms);
    },
    reset: () => {
      fake.requests.length = 0;
      fake.timings.length = 0;
      failures = [];
      delays = [];
      fake.acceptKeys = null;
      for (const k of Object.keys(handlers)) delete handlers[k];
      Object.assign(handlers, DEFAULTS);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const server: Server = createServer(async (req, res) => {
    const start = performance.now();
    res.on("finish", () => fake.timings.push({ path: req.url ?? "", start, ms: performance.now() - start }));
    const raw = await readBody(req);
    const path = (req.url ?? "").split("?")[0]!;
    const contentType = req.headers["content-type"];
    let body: any = null;
    if (contentType?.startsWith("application/json") && raw.length) body = JSON.parse(raw.toString("utf8"));
    if (contentType?.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
      body = {};
      for (const [k, v] of form.entries()) {
        body[k] = typeof v === "string" ? v : { name: (v as File).name, type: v.type, size: v.size };
      }
    }
    fake.requests.push({
      method: req.method ?? "",
      path,
      authorization: req.headers.authorization,
      contentType,
      body,
      text: raw.toString("utf8"),
    });
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(json));
    };
    const delay = delays.shift();
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (res.destroyed) return;
    const failure = failures.shift();
    if (failure) {
      const headers: Record<string, string> = failure.retryAfter
        ? { "retry-after": String(failure.retryAfter) }
        : {};
      return send(
        failure.status,
        { error: { message: `fake failure ${failure.status}`, type: "server_error", code: null } },
        headers,
      );
    }
    const key = req.headers.authorization?.replace(/^Bearer /, "");
    if (fake.acceptKeys && !fake.acceptKeys.includes(key ?? "")) {
      return send(401, {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    }
    if (req.method === "GET" && path === "/v1/models") {
      return send(200, {
        object: "list",
        data: ["fake-chat", "fake-embed", "whisper-fake"].map((id) => ({
          id,
          object: "model",
          created: 1_700_000_000,
          owned_by: "fake",
        })),
      });
    }
    if (req.method === "POST" && path === "/v1/chat/completions") {
      const call = parseChat(body);
      const handler = handlers[call.schemaName];
      if (!handler)
        return send(400, {
          error: { message: `no handler for ${call.schemaName}`, type: "invalid_request_error" },
        });
      const answer = handler(call);
      return send(200, {
        id: "chatcmpl-fake",
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: typeof answer === "string" ? answer : JSON.stringify(answer),
              refusal: null,
            },
            finish_reason: "stop",
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      });
    }
    if (req.method === "POST" && path === "/v1/embeddings") {
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return send(200, {
        object: "list",
        data: input.map((t, index) => ({ object: "embedding", index, embedding: embed(t) })),
        model: body.model,
        usage: { prompt_tokens: input.length * 10, total_tokens: input.length * 10 },
      });
    }
    if (req.method === "POST" && path === "/v1/audio/transcriptions") {
      if (!body?.file || !body?.model)
        return send(400, { error: { message: "file and model are required" } });
      return send(200, { text: fake.transcript });
    }
    send(404, { error: { message: `no route ${req.method} ${path}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${port}`;
  fake.baseUrl = `${fake.url}/v1`;
  return fake;
}
