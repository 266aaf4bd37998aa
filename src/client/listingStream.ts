// Reads the flat listing (GET /api/me/files) as it arrives: the records of its top-level "files"
// array are parsed a network chunk at a time and handed over in batches, so 100,000 notes never
// exist at once as one 60 MiB JSON text, its network buffers and every record in full (the mount
// keeps only part of each record). Everything else of the listing (folders, owners, cursor) is
// parsed at the end, with "files" left empty.
//
// Where the records end is found by scanning the JSON, byte by byte; a txtfs service says
// (`LISTING_LINES_HEADER`) that it writes each record on a line of its own, and then the last line
// end of a chunk is enough (100,000 notes: the scan was ~0.3 s of the mount's ~1.2 s of listing).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const NEWLINE = 0x0a;

/** How many backslashes end `buf` before `at`. */
function backslashesBefore(buf: Buffer, at: number): number {
  let n = 0;
  while (at - n - 1 >= 0 && buf[at - n - 1] === BACKSLASH) n++;
  return n;
}

export class ListingSplitter {
  private readonly onFiles: (files: unknown[]) => void;
  /** Nesting: 1 inside the top-level object. */
  private depth = 0;
  private inString = false;
  /** The key string being read at depth 1 (its bytes so far), and the last one read. */
  private key: Buffer[] | undefined;
  private lastKey = "";
  /** Inside the top-level "files" array. */
  private inFiles = false;
  /** Bytes of the record still open at the end of the last chunk. */
  private carry: Buffer[] = [];
  /** The listing without its records. */
  private readonly rest: Buffer[] = [];
  /** Inside a string, the chunks so far ended with an odd run of backslashes (the next byte is escaped). */
  private oddBackslashes = false;

  /** Records come one a line (the service said so): once in "files", lines are taken whole. */
  private readonly byLines: boolean;
  /** In "files", taking lines; then past its end (everything goes to `rest`). */
  private mode: "scan" | "lines" | "after" = "scan";

  constructor(onFiles: (files: unknown[]) => void, opts: { lines?: boolean } = {}) {
    this.onFiles = onFiles;
    this.byLines = opts.lines === true;
  }

  push(chunk: Buffer): void {
    if (this.mode === "lines") {
      this.pushLines(chunk);
      return;
    }
    if (this.mode === "after") {
      this.rest.push(Buffer.from(chunk));
      return;
    }
    let restFrom = this.inFiles ? -1 : 0;
    /** Where the records of this batch start in this chunk (-1: none yet, or carried over). */
    let batchFrom = this.carry.length > 0 ? 0 : -1;
    /** Just after the last record that ended in this chunk. */
    let batchTo = -1;
    let keyFrom = this.key ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      if (this.inString) {
        const q = chunk.indexOf(QUOTE, i);
        if (q < 0) break; // the string goes on in the next chunk
        i = q;
        const run = backslashesBefore(chunk, q);
        const odd = (run % 2 === 1) !== (run === q && this.oddBackslashes); // a run from the chunk's start goes on from the last
        this.oddBackslashes = false;
        if (odd) continue; // an escaped quote
        this.inString = false;
        if (this.key) {
          this.key.push(chunk.subarray(keyFrom, q));
          this.lastKey = Buffer.concat(this.key).toString("utf8");
          this.key = undefined;
        }
        continue;
      }
      const b = chunk[i];
      if (b === QUOTE) {
        this.inString = true;
        this.oddBackslashes = false;
        if (this.depth === 1) {
          this.key = [];
          keyFrom = i + 1;
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        this.depth++;
        if (this.depth === 2 && b === OPEN_BRACKET && this.lastKey === "files") {
          this.inFiles = true;
          this.rest.push(Buffer.from(chunk.subarray(restFrom, i + 1)));
          restFrom = -1;
          if (this.byLines) {
            this.mode = "lines";
            this.pushLines(chunk.subarray(i + 1));
            return;
          }
        } else if (this.inFiles && this.depth === 3 && batchFrom < 0) batchFrom = i;
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        this.depth--;
        if (this.inFiles && this.depth === 2) batchTo = i + 1;
        else if (this.inFiles && this.depth === 1) {
          this.inFiles = false;
          restFrom = i;
        }
      }
    }
    if (this.inString) {
      const run = backslashesBefore(chunk, chunk.length);
      this.oddBackslashes = (run % 2 === 1) !== (run === chunk.length && this.oddBackslashes);
    }
    if (this.key && keyFrom >= 0 && this.inString) this.key.push(Buffer.from(chunk.subarray(keyFrom)));
    if (batchTo > 0) {
      const parts = [...this.carry, chunk.subarray(batchFrom, batchTo)];
      this.carry = [];
      this.onFiles(JSON.parse(`[${Buffer.concat(parts).toString("utf8")}]`) as unknown[]);
      batchFrom = -1;
      // A record opened after the last one that ended: it goes on in the next chunk.
      const next = this.inFiles ? chunk.indexOf(OPEN_BRACE, batchTo) : -1;
      if (next >= 0 && this.depth >= 3) this.carry.push(Buffer.from(chunk.subarray(next)));
    } else if (batchFrom >= 0 && this.inFiles && this.depth >= 3) {
      this.carry.push(Buffer.from(chunk.subarray(batchFrom)));
    }
    if (restFrom >= 0) this.rest.push(Buffer.from(chunk.subarray(restFrom)));
  }

  /**
   * Inside "files", records one a line (`,` at the end of all but the last): every whole line of
   * the chunk (and of the carried start of the first) in one JSON.parse. The line that starts with
   * `]` ends the array: it and everything after it is the rest of the listing.
   */
  private pushLines(chunk: Buffer): void {
    const lastEnd = chunk.lastIndexOf(NEWLINE);
    if (lastEnd < 0) {
      if (chunk.length) this.carry.push(Buffer.from(chunk));
      return;
    }
    const whole = Buffer.concat([...this.carry, chunk.subarray(0, lastEnd + 1)]).toString("utf8");
    this.carry = lastEnd + 1 < chunk.length ? [Buffer.from(chunk.subarray(lastEnd + 1))] : [];
    const at = whole.startsWith("]") ? 0 : whole.indexOf("\n]");
    const close = at > 0 ? at + 1 : at;
    const records = (close >= 0 ? whole.slice(0, close) : whole).trim();
    if (records)
      this.onFiles(JSON.parse(`[${records.endsWith(",") ? records.slice(0, -1) : records}]`) as unknown[]);
    if (close >= 0) {
      this.mode = "after";
      this.rest.push(Buffer.from(whole.slice(close), "utf8"), ...this.carry);
      this.carry = [];
    }
  }

  /** The listing without its records (parsed JSON), once every chunk was pushed. */
  end(): unknown {
    if (this.mode === "lines") {
      // The last line: `]` and the rest of the listing (nothing ends it with a line end).
      const last = Buffer.concat(this.carry).toString("utf8");
      this.carry = [];
      if (!last.startsWith("]")) throw new SyntaxError("the listing ended in the middle of its JSON");
      this.rest.push(Buffer.from(last, "utf8"));
      this.mode = "after";
    }
    if (this.mode === "after") return JSON.parse(Buffer.concat(this.rest).toString("utf8"));
    if (this.depth !== 0 || this.inString || this.carry.length > 0)
      throw new SyntaxError("the listing ended in the middle of its JSON");
    return JSON.parse(Buffer.concat(this.rest).toString("utf8"));
  }
}
