// Every request the binding hands over, to its handler (one per operation, by group: attrs.ts,
// entries.ts, files.ts, dirs.ts, xattrs.ts), and every failure to its errno (errno.ts): a handler
// that throws is answered here, once. FORGET and held writes (HELD) have nobody to answer.
import { constants } from "node:os";
import type { Dispatch } from "../binding.ts";
import { Errno, errnoOf } from "../errno.ts";
import { HeldWrites } from "../kernelCache/heldWrites.ts";
import { OP_NAMES, Op } from "../protocol.ts";
import { attrOps } from "./attrs.ts";
import type { Handler, OpContext } from "./context.ts";
import { dirOps } from "./dirs.ts";
import { entryOps } from "./entries.ts";
import { fileOps } from "./files.ts";
import { HiddenNotes } from "./hiddenNotes.ts";
import { xattrOps } from "./xattrs.ts";

const { ENOSYS } = constants.errno;

/** An operation answered after this long is logged (a program waited that long for it). */
const SLOW_OPERATION_MS = 10_000;

/** Operations whose first argument is a name in the folder `ino`: their path is that name's. */
const BY_NAME = new Set<number>([
  Op.LOOKUP,
  Op.MKDIR,
  Op.MKNOD,
  Op.SYMLINK,
  Op.UNLINK,
  Op.RMDIR,
  Op.RENAME,
  Op.CREATE,
]);

export interface Dispatcher {
  dispatch: Dispatch;
  /** Once the writes held in C handed over so far were applied. */
  landed(): Promise<void>;
}

export function dispatcher(ctx: OpContext): Dispatcher {
  const { native, nodes, log } = ctx;
  const held = new HeldWrites(ctx.vfs, nodes, log, (ino) => ctx.kernelMade(ino));
  const hidden = new HiddenNotes(ctx);
  const handlers: Partial<Record<number, Handler>> = {
    ...attrOps(ctx),
    ...entryOps(ctx, hidden),
    ...fileOps(ctx, held, hidden),
    ...dirOps(ctx),
    ...xattrOps(ctx),
  };

  /** What a log line says the operation was about (worked out only for one). */
  const pathFor = (op: number, ino: number, args: unknown[]): string | undefined =>
    BY_NAME.has(op) ? nodes.childPath(ino, args[0] as string) : nodes.pathOf(ino);

  const slow = (op: number, ino: number, args: unknown[], started: number) => {
    // Answered only with its outcome, however long that took (never a timeout while it goes on:
    // what it changes would land after the program was told it failed): said so.
    const ms = Date.now() - started;
    if (ms >= SLOW_OPERATION_MS)
      log.warn({ op: OP_NAMES[op], path: pathFor(op, ino, args), ms }, "a filesystem operation took long");
  };

  return {
    landed: () => held.landed(),
    dispatch(op, request, ino, ...args) {
      if (op === Op.FORGET) {
        const pairs = args[0] as Float64Array;
        for (let i = 0; i < pairs.length; i += 2) nodes.forget(pairs[i]!, pairs[i + 1]!);
        return;
      }
      if (op === Op.HELD) return held.apply(ino, args[0] as number, args[1] as Buffer, args[2] as number);
      if (request === undefined) return;
      const handler = handlers[op];
      if (!handler) return native.replyErr(request, ENOSYS);
      const started = Date.now();
      const run = () => handler(request, ino, ...(args as never[]));
      const pending = held.pending;
      (pending ? pending.then(run) : run()).then(
        () => slow(op, ino, args, started),
        (err: unknown) => {
          native.replyErr(
            request,
            err instanceof Errno
              ? err.errno
              : errnoOf(err, log, OP_NAMES[op] ?? String(op), pathFor(op, ino, args)),
          );
          slow(op, ino, args, started);
        },
      );
    },
  };
}
