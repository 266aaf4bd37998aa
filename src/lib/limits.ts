// Limits the mount must know before the service tells it (a write-behind save is accepted locally,
// so a note the service would refuse has to be refused at close).
/** Largest note body the service stores, in bytes of UTF-8 (413 beyond). */
export const NOTE_CONTENT_BYTES = 5 * 1024 * 1024;
