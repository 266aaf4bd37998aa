// The kernel's caches, and the C copies of them that answer requests without JavaScript.
//
// The kernel keeps the tree's names, attributes and listings for an hour (timeouts.ts), and C
// answers absent names, read-only opens and clean flushes and holds writes; all of that stays right
// only because JavaScript keeps a record of what each was given and tells each of every change:
//
//   JavaScript (here)   C (native/fuse3)   what it keeps
//   nodes.ts            -                  node ids ↔ folder and name, lookup counts, names kept absent
//   folderNames.ts      names.c            each folder's names: a lookup of any other is ENOENT in C
//   nativeOpens.ts      opens.c            notes a read-only open (and stat) of may be answered in C
//   heldWrites.ts       held.c             writes C answered, handed over in order
//   -                   flushes.c          handles written through since their last flush
//   fingerprint.ts      -                  what the kernel was last given (attributes, a listing)
//   staleWindow.ts      -                  paths whose size the kernel may still hold from before
//
// Who updates them: the handlers in ops/ for what the kernel asked (an operation's own names are
// added before it is answered; opens are withdrawn before anything may change a note), and
// reconcile.ts for what the vfs reports changed without the kernel (KernelView.onAttrsChanged,
// Vfs.onRemoteChange): in the same turn as the change it withdraws C's opens and adds C's names,
// and in the next it compares each node with what the kernel was given and notifies the kernel
// (notify_inval_entry, notify_inval_inode) of what differs. C updates flushes.c and held.c itself,
// per request; JavaScript drops what C keeps of a node when the kernel forgets it (nodes.ts).
export { attrKey, listKey } from "./fingerprint.ts";
export { FolderNames } from "./folderNames.ts";
export { HELD_WRITES_MAX_BYTES, HeldWrites } from "./heldWrites.ts";
export { NativeOpens } from "./nativeOpens.ts";
export { type KernelNode, NodeTable, ROOT } from "./nodes.ts";
export { KernelReconciler } from "./reconcile.ts";
export { StaleWindow } from "./staleWindow.ts";
export { KEPT_S, SHORT_S } from "./timeouts.ts";
