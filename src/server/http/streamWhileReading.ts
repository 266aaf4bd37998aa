// A response body written while it is being read from the store (GET /api/me/files): the text
// goes out page by page as `produce` writes it, never waiting for the client.
import { Readable } from "node:stream";

/**
 * Resolves with the body once `produce` has written its first text. A failure before that rejects
 * (the caller answers with the usual error body, and no stream is left to fail on its own); a
 * failure after it destroys the stream, which cuts the response (the client sees a body that ends
 * in the middle).
 */
export async function streamWhileReading(
  produce: (write: (text: string) => void) => Promise<void>,
): Promise<Readable> {
  const body = new Readable({ read() {} });
  let sending = false;
  let started!: () => void;
  const firstText = new Promise<void>((resolve) => (started = resolve));
  const reading = produce((text) => {
    body.push(text);
    started();
  });
  reading.then(
    () => body.push(null),
    (err) => {
      if (sending) body.destroy(err as Error);
    },
  );
  await Promise.race([firstText, reading]);
  sending = true;
  return body;
}
