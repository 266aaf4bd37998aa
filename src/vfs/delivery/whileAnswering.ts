// Waiting on the service for as long as it keeps answering. A request into a black-holed link (TCP
// accepted, nothing ever comes back) is bounded only by its own deadline (a write's is a minute);
// a program waiting on it must hear the truth sooner. Silence is measured by the bytes that come
// back (any request's), and a cheap probe asks for some when none came for half a read deadline:
// a slow service busy with our write still answers it, a black hole does not.
// Silence is elapsed time, read from the monotonic clock (performance.now()), never the wall clock:
// a wall clock set back an hour mid-wait (NTP) would have held a program on a black hole an hour
// longer, one set forward would have failed a wait on a service that answers.

/** What the wait reads of the client. */
export interface Answers {
  /** How long the service may stay silent before it counts as not answering. */
  readonly readDeadlineMs: number;
  /** When bytes of an answer last arrived (performance.now(), ms; 0: never). */
  readonly answeredAt: number;
  /** A request the service answers at once if it answers at all. */
  probe(): Promise<void>;
}

/** The service answered nothing (not even a probe) for a whole read deadline. */
export class Unanswered extends Error {
  constructor(silentMs: number) {
    super(`the service has not answered for ${Math.round(silentMs / 1000)} s`);
    this.name = "Unanswered";
  }
}

/**
 * `work`'s outcome, or Unanswered once the service was silent for a read deadline while it went
 * on (`work` itself goes on: the caller decides what its later outcome means).
 */
export function whileAnswering<T>(work: Promise<T>, answers: Answers): Promise<T> {
  const deadline = answers.readDeadlineMs;
  const since = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let probing = false;
  return new Promise<T>((resolve, reject) => {
    let over = false;
    const end = () => {
      over = true;
      clearTimeout(timer);
    };
    work.then(
      (v) => {
        end();
        resolve(v);
      },
      (err: unknown) => {
        end();
        reject(err);
      },
    );
    const check = () => {
      if (over) return;
      const silent = performance.now() - Math.max(since, answers.answeredAt);
      if (silent >= deadline) {
        end();
        reject(new Unanswered(silent));
        return;
      }
      const half = deadline / 2;
      if (silent >= half && !probing) {
        probing = true;
        answers
          .probe()
          .catch(() => {}) // no answer is what the silence shows
          .finally(() => {
            probing = false;
          });
      }
      timer = setTimeout(check, (silent < half ? half : deadline) - silent + 1);
    };
    check();
  });
}
