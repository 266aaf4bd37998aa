/** A mount that cannot be made, said in one line (the CLI prints it and exits 2). */
export class MountError extends Error {}
