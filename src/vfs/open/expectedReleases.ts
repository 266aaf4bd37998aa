// close(2) returns once the kernel's FLUSH is answered; its RELEASE follows on its own, queued
// for the daemon but maybe not read yet. A local file that is text again goes up as a note only at
// that release, so `txtfs sync` right after the program exits could answer "everything is on the
// service" before the save exists. A flush after a write therefore expects the handle's release,
// and a drain waits for it: bounded, since a descriptor dup'd and kept open never sends one.

/** How long a drain waits for a release a flush announced (the kernel sends it at once). */
export const RELEASE_EXPECTED_WITHIN_MS = 2000;

interface Expected {
  promise: Promise<void>;
  done: () => void;
}

export class ExpectedReleases {
  private readonly waiting = new Map<number, Expected>();
  private readonly withinMs: number;

  constructor(withinMs = RELEASE_EXPECTED_WITHIN_MS) {
    this.withinMs = withinMs;
  }

  /** `fd` was flushed after a write: its release is probably on its way. */
  expect(fd: number): void {
    if (this.waiting.has(fd)) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    const timer = setTimeout(() => this.settle(fd), this.withinMs);
    timer.unref();
    this.waiting.set(fd, {
      promise,
      done: () => {
        clearTimeout(timer);
        resolve();
      },
    });
  }

  /** `fd` was released (its release has done its work), or written again: the flush was not its close. */
  settle(fd: number): void {
    const expected = this.waiting.get(fd);
    if (!expected) return;
    this.waiting.delete(fd);
    expected.done();
  }

  /** Once every release expected so far came (or its wait ran out). */
  async arrived(): Promise<void> {
    await Promise.all([...this.waiting.values()].map((e) => e.promise));
  }
}
