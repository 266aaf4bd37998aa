// The listing read in batches (src/client/listingStream.ts): whatever the chunks, the records and
// the rest come out exactly as JSON.parse of the whole text would give them.
import { describe, expect, it } from "vitest";
import { ListingSplitter } from "../../src/client/listingStream.ts";

const tricky = [
  { id: "f_1", name: 'quote " and {brace} [bracket]', tags: ["a", "b"], context: "back\\slash\\" },
  { id: "f_2", name: "files", context: '\\"', tags: [], nested: { deep: [1, { x: "}" }] } },
  { id: "f_3", name: "日本語 ✓ émoji 🎉", size: 12, folderId: null, etag: '"1-abc"' },
  { id: "f_4", name: "\\\\", context: 'ends with escapes \\\\\\"', tags: ["files", "[", "{"] },
];

function split(text: string, sizes: (i: number) => number, lines = false) {
  const got: unknown[] = [];
  const batches: number[] = [];
  const s = new ListingSplitter(
    (files) => {
      batches.push(files.length);
      got.push(...files);
    },
    { lines },
  );
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes(i));
    s.push(bytes.subarray(at, at + n));
    at += n;
  }
  return { files: got, rest: s.end(), batches };
}

describe("ListingSplitter", () => {
  const listing = {
    files: tricky,
    folders: [{ id: "d_1", name: "files [x]", tags: ["{"] }],
    owners: [{ id: "u_1", email: "a@b", name: '"files"' }],
    cursor: 42,
  };
  const text = JSON.stringify(listing, null, 1);

  it("gives every record and the rest, chunk by chunk, for every chunk size", () => {
    for (const size of [1, 2, 3, 5, 7, 11, 64, 1000, 1 << 20]) {
      const r = split(text, () => size);
      expect(r.files, `chunks of ${size}`).toEqual(listing.files);
      expect(r.rest, `chunks of ${size}`).toEqual({ ...listing, files: [] });
    }
  });

  it("cuts anywhere: every split point of the text into two chunks", () => {
    const compact = JSON.stringify(listing);
    const length = Buffer.byteLength(compact);
    for (let cut = 1; cut < length; cut++) {
      const r = split(compact, (i) => (i === 0 ? cut : length));
      expect(r.files).toEqual(listing.files);
      expect(r.rest).toEqual({ ...listing, files: [] });
    }
  });

  it("hands over records in batches as they arrive", () => {
    const many = {
      files: Array.from({ length: 500 }, (_, i) => ({ id: `f_${i}`, name: `n${i}` })),
      cursor: 1,
    };
    const r = split(JSON.stringify(many), () => 1000);
    expect(r.files).toEqual(many.files);
    expect(r.batches.length).toBeGreaterThan(5);
  });

  it("an empty listing, and one whose files come last", () => {
    expect(split('{"files":[],"folders":[],"cursor":0}', () => 4)).toEqual({
      files: [],
      rest: { files: [], folders: [], cursor: 0 },
      batches: [],
    });
    const last = { cursor: 3, folders: [], files: [{ id: "f_1" }] };
    expect(split(JSON.stringify(last), () => 3).files).toEqual(last.files);
  });

  it("a listing cut short is an error, not a smaller tree", () => {
    const s = new ListingSplitter(() => {});
    s.push(Buffer.from(text.slice(0, text.length / 2)));
    expect(() => s.end()).toThrow(SyntaxError);
  });

  describe("records one a line (the service's own format, writeFlatIndex)", () => {
    /** As the service writes it: pages of records, each record on a line, the rest after `]`. */
    const asWritten = (l: typeof listing, page: number) => {
      let text = '{"files":[';
      for (let i = 0; i < l.files.length; i += page)
        text += `${i > 0 ? "," : ""}\n${l.files
          .slice(i, i + page)
          .map((f) => JSON.stringify(f))
          .join(",\n")}`;
      const { files: _, ...rest } = l;
      return `${text}\n],${JSON.stringify(rest).slice(1)}`;
    };

    it("gives every record and the rest for every chunk size and page size", () => {
      for (const page of [1, 2, 3, 1000]) {
        const text = asWritten(listing, page);
        expect(JSON.parse(text)).toEqual(listing);
        for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
          const r = split(text, () => size, true);
          expect(r.files, `pages of ${page}, chunks of ${size}`).toEqual(listing.files);
          expect(r.rest, `pages of ${page}, chunks of ${size}`).toEqual({ ...listing, files: [] });
        }
      }
    });

    it("cuts anywhere: every split point into two chunks", () => {
      const text = asWritten(listing, 2);
      const length = Buffer.byteLength(text);
      for (let cut = 1; cut < length; cut++) {
        const r = split(text, (i) => (i === 0 ? cut : length), true);
        expect(r.files).toEqual(listing.files);
        expect(r.rest).toEqual({ ...listing, files: [] });
      }
    });

    it("an empty listing; a listing cut short is an error", () => {
      const empty = { files: [], folders: [], owners: [], cursor: 0 };
      expect(split(asWritten(empty, 10), () => 3, true)).toEqual({ files: [], rest: empty, batches: [] });
      const s = new ListingSplitter(() => {}, { lines: true });
      const text = asWritten(listing, 1);
      s.push(Buffer.from(text.slice(0, text.indexOf("\n]"))));
      expect(() => s.end()).toThrow(SyntaxError);
    });
  });
});
