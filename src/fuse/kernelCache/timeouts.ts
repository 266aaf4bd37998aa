// How long the kernel may keep what it is given (entry and attribute timeouts, in seconds).

/**
 * The tree's names and attributes: every change of them the vfs reports, and reconcile.ts tells the
 * kernel, so it may keep them until told (TXTFS_KERNEL_KEEP_S shortens it, to look for a missed one).
 */
export const KEPT_S = Number(process.env.TXTFS_KERNEL_KEEP_S ?? 3600);

/** The rest (sidecars, `.txtfs/`): changes nobody reports, so the kernel asks again soon. */
export const SHORT_S = 1;
