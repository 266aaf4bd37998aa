// Requests the server makes to an AI provider on a user's behalf are outbound requests to a URL a
// user may have chosen: never to link-local or cloud-metadata addresses, to private ranges only when
// the operator allows it, with a cap on the answer's size. The check runs in the connection's own DNS
// lookup, so a name cannot resolve to one address when checked and another when connected.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, FormData as UndiciFormData, fetch as undiciFetch } from "undici";

export interface OutboundPolicy {
  /** Loopback and private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) are allowed. */
  allowPrivate: boolean;
  /** Answers larger than this are cut off with an error. */
  maxResponseBytes: number;
}

/** Never reachable: link-local (cloud metadata lives there), "this network", multicast, reserved. */
const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet("169.254.0.0", 16, "ipv4");
FORBIDDEN.addSubnet("0.0.0.0", 8, "ipv4");
FORBIDDEN.addSubnet("224.0.0.0", 4, "ipv4");
FORBIDDEN.addSubnet("240.0.0.0", 4, "ipv4");
FORBIDDEN.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud metadata
FORBIDDEN.addSubnet("fe80::", 10, "ipv6");
FORBIDDEN.addSubnet("ff00::", 8, "ipv6");
FORBIDDEN.addAddress("fd00:ec2::254", "ipv6"); // AWS metadata over IPv6
FORBIDDEN.addAddress("::", "ipv6");

const PRIVATE = new BlockList();
PRIVATE.addSubnet("127.0.0.0", 8, "ipv4");
PRIVATE.addSubnet("10.0.0.0", 8, "ipv4");
PRIVATE.addSubnet("172.16.0.0", 12, "ipv4");
PRIVATE.addSubnet("192.168.0.0", 16, "ipv4");
PRIVATE.addSubnet("100.64.0.0", 10, "ipv4");
PRIVATE.addAddress("::1", "ipv6");
PRIVATE.addSubnet("fc00::", 7, "ipv6");

export class OutboundBlocked extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundBlocked";
  }
}

/** Why this address may not be connected to, or null when it may. */
export function blockedReason(address: string, policy: Pick<OutboundPolicy, "allowPrivate">): string | null {
  let family: "ipv4" | "ipv6" = isIP(address) === 6 ? "ipv6" : "ipv4";
  let addr = address;
  // An IPv4-mapped IPv6 address (::ffff:169.254.169.254) is checked as the IPv4 address it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) {
    addr = mapped[1]!;
    family = "ipv4";
  }
  if (FORBIDDEN.check(addr, family)) return `${address} is a link-local, metadata or reserved address`;
  if (!policy.allowPrivate && PRIVATE.check(addr, family))
    return `${address} is a private or loopback address (the operator has not allowed those)`;
  return null;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: object, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const why = blockedReason(a.address, policy);
        if (why) return callback(new OutboundBlocked(`${hostname} resolves to ${why}`), []);
      }
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new OutboundBlocked(`${hostname} has no address`), []);
      return callback(null, first.address, first.family);
    });
  };
}

/** Counts the body's bytes and fails the stream past the cap. */
function capped(body: ReadableStream<Uint8Array>, max: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) controller.error(new OutboundBlocked(`the answer exceeds ${max} bytes`));
        else controller.enqueue(chunk);
      },
    }),
  );
}

export interface GuardedFetch {
  fetch: typeof fetch;
  close(): Promise<void>;
}

/**
 * A fetch for the `openai` client: checked destinations, a size cap, and a provider's 429 handed
 * back at once (`x-should-retry: false`) so its retry time reaches the caller instead of a wait.
 */
export function guardedFetch(policy: OutboundPolicy): GuardedFetch {
  const agent = new Agent({ connect: { lookup: guardedLookup(policy) as never }, connections: 16 });
  const run = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    // An address literal connects without a lookup: check it here.
    if (isIP(host)) {
      const why = blockedReason(host, policy);
      if (why) throw new OutboundBlocked(why);
    }
    let body = init.body as unknown;
    // The openai client builds multipart bodies with the global FormData, which this fetch (the
    // undici package, for its connection-level lookup) does not know: copy it into its own.
    if (body instanceof globalThis.FormData) {
      const form = new UndiciFormData();
      for (const [k, v] of body.entries()) form.append(k, v as never);
      body = form;
    }
    const res = await undiciFetch(url, {
      ...(init as object),
      body: body as never,
      redirect: "manual", // a redirect could point anywhere: providers do not redirect API calls
      dispatcher: agent,
    });
    const length = Number(res.headers.get("content-length") ?? "0");
    if (length > policy.maxResponseBytes) {
      await res.body?.cancel();
      throw new OutboundBlocked(`the answer (${length} bytes) exceeds ${policy.maxResponseBytes} bytes`);
    }
    const headers = new Headers(res.headers as unknown as Headers);
    if (res.status === 429) headers.set("x-should-retry", "false");
    return new Response(
      res.body ? capped(res.body as ReadableStream<Uint8Array>, policy.maxResponseBytes) : null,
      {
        status: res.status,
        statusText: res.statusText,
        headers,
      },
    );
  };
  return { fetch: run as typeof fetch, close: () => agent.close() };
}
