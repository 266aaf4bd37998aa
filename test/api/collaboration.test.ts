import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { editRegion, mapRange } from "../../src/server/domain/anchors.ts";
import {
  expectError,
  mkfile,
  mkSharedFile,
  startTestServer,
  type TestServer,
  type TestUser,
} from "../helpers/server.ts";

let t: TestServer;
let alice: TestUser; // owner
let bob: TestUser; // reader
let carol: TestUser; // writer
let dave: TestUser; // no access

beforeAll(async () => {
  t = await startTestServer();
  alice = await t.user();
  bob = await t.user();
  carol = await t.user();
  dave = await t.user();
});
afterAll(() => t.close());

const sharedFile = (name: string, content: string) => mkSharedFile(alice, bob, carol, { name, content });

const contentOf = async (id: string) => (await alice.api.get(`/api/v1/files/${id}`)).body.content as string;

describe("comments", () => {
  it("a reader comments on a selection; fields as TxtComment; listed for everyone with access", async () => {
    const file = await sharedFile("c1.md", "Hello 🌍 world");
    // 🌍 is two UTF-16 code units: "world" starts at 9
    const res = await bob.api.post(`/api/v1/files/${file.id}/comments`, {
      body: "Which world?",
      selection_start: 9,
      selection_end: 14,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.comment).toMatchObject({
      file_id: file.id,
      user_id: bob.id,
      user_email: bob.email,
      body: "Which world?",
      selection_start: 9,
      selection_end: 14,
      selected_text: "world",
      resolved: false,
      resolved_by: null,
      resolved_at: null,
    });
    expect(res.body.comment.user_name).toEqual(expect.any(String));
    for (const who of [alice, carol, bob]) {
      const list = await who.api.get(`/api/v1/files/${file.id}/comments`);
      expect(list.body.comments.map((c: any) => c.id)).toEqual([res.body.comment.id]);
    }
    const me = await alice.api.get(`/api/me/files/${file.id}/comments/${res.body.comment.id}`);
    expect(me.body.comment.body).toBe("Which world?");
    expectError(await dave.api.get(`/api/v1/files/${file.id}/comments`), 404, "not_found");
    expectError(await dave.api.post(`/api/v1/files/${file.id}/comments`, { body: "hi" }), 404, "not_found");
  });

  it("edit (author only), resolve and reopen (author, writer, owner; records who and when), delete", async () => {
    const file = await sharedFile("c2.md", "text");
    const c = (await bob.api.post(`/api/v1/files/${file.id}/comments`, { body: "first" })).body.comment;
    const url = `/api/v1/files/${file.id}/comments/${c.id}`;
    expectError(await alice.api.request("PATCH", url, { json: { body: "owner edit" } }), 403, "forbidden");
    const edited = await bob.api.request("PATCH", url, { json: { body: "second" } });
    expect(edited.body.comment).toMatchObject({ body: "second", resolved: false });
    const resolved = await carol.api.post(`${url}/resolve`);
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body.comment).toMatchObject({ resolved: true, resolved_by: carol.id });
    expect(resolved.body.comment.resolved_at).toEqual(expect.any(String));
    expect(
      (await alice.api.get(`/api/v1/files/${file.id}/comments?resolved=true`)).body.comments,
    ).toHaveLength(1);
    expect(
      (await alice.api.get(`/api/v1/files/${file.id}/comments?resolved=false`)).body.comments,
    ).toHaveLength(0);
    const reopened = await alice.api.request("PATCH", url, { json: { resolved: false } });
    expect(reopened.body.comment).toMatchObject({ resolved: false, resolved_by: null, resolved_at: null });
    // another reader (not the author) may not resolve
    const erin = await t.user();
    await alice.api.post("/api/v1/shares", { fileId: file.id, email: erin.email, role: "reader" });
    expectError(await erin.api.post(`${url}/resolve`), 403, "read_only_access");
    expectError(await erin.api.delete(url), 403, "forbidden");
    expectError(await carol.api.delete(url), 403, "forbidden"); // writers resolve, they don't delete
    expect((await bob.api.get(url)).body.comment).toMatchObject({ body: "second", resolved: false });
    const del = await bob.api.delete(url);
    expect(del.body).toMatchObject({ id: c.id, deleted: true });
    expectError(await bob.api.get(url), 404, "not_found");
  });

  it("bad input gets the error body and changes nothing", async () => {
    const file = await sharedFile("c3.md", "a😀b");
    const url = `/api/v1/files/${file.id}/comments`;
    const bad: [Record<string, unknown>, number, string][] = [
      [{ body: "" }, 400, "validation_failed"],
      [{ body: "   " }, 400, "validation_failed"],
      [{ body: "x".repeat(10_001) }, 400, "validation_failed"],
      [{}, 400, "validation_failed"],
      [{ body: "x", selection_start: 1 }, 400, "validation_failed"],
      [{ body: "x", selection_start: 3, selection_end: 1 }, 400, "invalid_range"],
      [{ body: "x", selection_start: 0, selection_end: 99 }, 400, "invalid_range"],
      [{ body: "x", selection_start: 0, selection_end: 2 }, 400, "invalid_range"], // splits the emoji
      [{ body: "x", selection_start: -1, selection_end: 1 }, 400, "validation_failed"],
      [{ body: "x", selection_start: 0, selection_end: 1, selected_text: "zzz" }, 409, "selection_mismatch"],
      [{ body: "x", extra: true }, 400, "validation_failed"],
    ];
    for (const [body, status, code] of bad) expectError(await bob.api.post(url, body), status, code);
    expect((await alice.api.get(url)).body.comments).toEqual([]);
    const ok = await bob.api.post(url, {
      body: "emoji",
      selection_start: 1,
      selection_end: 3,
      selected_text: "😀",
    });
    expect(ok.status, ok.text).toBe(201);
    const item = `${url}/${ok.body.comment.id}`;
    expectError(await bob.api.request("PATCH", item, { json: {} }), 400, "validation_failed");
    expectError(
      await bob.api.request("PATCH", item, { json: { resolved: "yes" } }),
      400,
      "validation_failed",
    );
    expectError(await bob.api.request("PATCH", `${url}/cm_nope`, { json: { body: "x" } }), 404, "not_found");
    expect((await bob.api.get(item)).body.comment.body).toBe("emoji");
  });

  it("anchors move with later edits, and go outdated when their text changes", async () => {
    const file = await sharedFile("c4.md", "alpha beta gamma");
    const url = `/api/v1/files/${file.id}/comments`;
    const beta = (await bob.api.post(url, { body: "b", selection_start: 6, selection_end: 10 })).body.comment;
    const gamma = (await bob.api.post(url, { body: "g", selection_start: 11, selection_end: 16 })).body
      .comment;
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "ALPHA-ALPHA beta gamma" });
    let list = (await bob.api.get(url)).body.comments;
    expect(list.find((c: any) => c.id === beta.id)).toMatchObject({ selection_start: 12, selection_end: 16 });
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "ALPHA-ALPHA beta GAMMA" });
    list = (await bob.api.get(url)).body.comments;
    expect(list.find((c: any) => c.id === gamma.id)).toMatchObject({
      anchor_state: "outdated",
      selected_text: "gamma",
    });
    expect(list.find((c: any) => c.id === beta.id)).toMatchObject({
      anchor_state: "current",
      selection_start: 12,
    });
  });

  it("comment events reach everyone who can see the file", async () => {
    const file = await sharedFile("c5.md", "x");
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const c = (await carol.api.post(`/api/v1/files/${file.id}/comments`, { body: "hey" })).body.comment;
    await alice.api.delete(`/api/v1/files/${file.id}/comments/${c.id}`);
    const feed = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    expect(feed).toEqual([
      expect.objectContaining({ kind: "comment", id: c.id, deleted: true, fileId: file.id }),
    ]);
    const created = (await dave.api.get("/api/v1/changes?cursor=0")).body.changes;
    expect(created.some((x: any) => x.id === c.id)).toBe(false);
  });

  it("needs the collaboration scopes", async () => {
    const limited = await t.user(undefined, ["files:read", "files:write"]);
    const file = await mkfile(limited, { name: "lim.md" });
    expectError(await limited.api.get(`/api/v1/files/${file.id}/comments`), 403, "insufficient_scope");
    expectError(
      await limited.api.post(`/api/v1/files/${file.id}/comments`, { body: "x" }),
      403,
      "insufficient_scope",
    );
  });
});

describe("suggestions", () => {
  it("a reader suggests; a writer accepts: the text changes as one new version", async () => {
    const file = await sharedFile("s1.md", "The quick brown fox.");
    const res = await bob.api.post(`/api/v1/files/${file.id}/suggestions`, {
      selection_start: 4,
      selection_end: 9,
      suggested_text: "slow",
    });
    expect(res.status, res.text).toBe(201);
    const s = res.body.suggestion;
    expect(s).toMatchObject({
      file_id: file.id,
      user_id: bob.id,
      user_email: bob.email,
      original_text: "quick",
      suggested_text: "slow",
      selection_start: 4,
      selection_end: 9,
      status: "pending",
      reviewed_by: null,
      reviewed_at: null,
    });
    expectError(
      await bob.api.post(`/api/v1/files/${file.id}/suggestions/${s.id}/accept`),
      403,
      "read_only_access",
    );
    const acc = await carol.api.post(`/api/v1/files/${file.id}/suggestions/${s.id}/accept`);
    expect(acc.status, acc.text).toBe(200);
    expect(acc.body.suggestion).toMatchObject({ status: "accepted", reviewed_by: carol.id });
    expect(acc.body.file.content).toBe("The slow brown fox.");
    expect(acc.headers.get("etag")).toBe(acc.body.file.etag);
    const versions = (await alice.api.get(`/api/v1/files/${file.id}/versions`)).body.versions;
    expect(versions[0]).toMatchObject({ version_number: 2, source: "suggestion", author_user_id: carol.id });
    // final: a second review is a 409
    expectError(
      await alice.api.post(`/api/v1/files/${file.id}/suggestions/${s.id}/reject`),
      409,
      "suggestion_not_pending",
    );
    expectError(
      await alice.api.post(`/api/v1/files/${file.id}/suggestions/${s.id}/accept`),
      409,
      "suggestion_not_pending",
    );
    expect(await contentOf(file.id)).toBe("The slow brown fox.");
  });

  it("reject leaves the text; PATCH {status} reviews too; the list filters by status", async () => {
    const file = await sharedFile("s2.md", "keep this");
    const url = `/api/v1/files/${file.id}/suggestions`;
    const a = (await bob.api.post(url, { selection_start: 0, selection_end: 4, suggested_text: "drop" })).body
      .suggestion;
    const b = (await bob.api.post(url, { selection_start: 5, selection_end: 9, suggested_text: "that" })).body
      .suggestion;
    const rej = await alice.api.post(`${url}/${a.id}/reject`);
    expect(rej.body.suggestion).toMatchObject({ status: "rejected", reviewed_by: alice.id });
    const patched = await alice.api.request("PATCH", `${url}/${b.id}`, { json: { status: "accepted" } });
    expect(patched.status, patched.text).toBe(200);
    expect(await contentOf(file.id)).toBe("keep that");
    expect((await bob.api.get(`${url}?status=rejected`)).body.suggestions.map((x: any) => x.id)).toEqual([
      a.id,
    ]);
    expect((await bob.api.get(`${url}?status=accepted`)).body.suggestions.map((x: any) => x.id)).toEqual([
      b.id,
    ]);
    expect((await bob.api.get(`${url}/${a.id}`)).body.suggestion.status).toBe("rejected");
  });

  it("If-Match guards every review the same way, by every path: a stale tag is 412 and nothing is reviewed", async () => {
    const file = await sharedFile("s-ifmatch.md", "alpha beta gamma delta");
    const url = `/api/v1/files/${file.id}/suggestions`;
    const stale = '"1-deadbeef00"';
    const reviews = [
      (id: string, h: Record<string, string>) => carol.api.post(`${url}/${id}/accept`, undefined, h),
      (id: string, h: Record<string, string>) => carol.api.post(`${url}/${id}/reject`, undefined, h),
      (id: string, h: Record<string, string>) =>
        carol.api.request("PATCH", `${url}/${id}`, { json: { status: "accepted" }, headers: h }),
      (id: string, h: Record<string, string>) =>
        carol.api.request("PATCH", `${url}/${id}`, { json: { status: "rejected" }, headers: h }),
    ];
    const words = ["alpha", "beta", "gamma", "delta"];
    for (const [i, review] of reviews.entries()) {
      const content = await contentOf(file.id);
      const start = content.indexOf(words[i]!);
      const s = (
        await bob.api.post(url, {
          selection_start: start,
          selection_end: start + words[i]!.length,
          suggested_text: words[i]!.toUpperCase(),
        })
      ).body.suggestion;
      expectError(await review(s.id, { "if-match": stale }), 412, "precondition_failed");
      expect((await bob.api.get(`${url}/${s.id}`)).body.suggestion.status).toBe("pending");
      expect(await contentOf(file.id)).toBe(content);
      // The current tag lets the review through.
      const etag = (await alice.api.get(`/api/v1/files/${file.id}`)).headers.get("etag")!;
      const ok = await review(s.id, { "if-match": etag });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.suggestion.status).toBe(i % 2 === 0 ? "accepted" : "rejected");
    }
    expect(await contentOf(file.id)).toBe("ALPHA beta GAMMA delta");
  });

  it("accept is refused with 409 suggestion_stale when the original text no longer stands there", async () => {
    const file = await sharedFile("s3.md", "one two three");
    const url = `/api/v1/files/${file.id}/suggestions`;
    const s = (await bob.api.post(url, { selection_start: 4, selection_end: 7, suggested_text: "TWO" })).body
      .suggestion;
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "one 2 three" });
    const e = expectError(await carol.api.post(`${url}/${s.id}/accept`), 409, "suggestion_stale");
    expect(e.resolution).toMatch(/suggest again/);
    expect(await contentOf(file.id)).toBe("one 2 three");
    expect((await bob.api.get(`${url}/${s.id}`)).body.suggestion).toMatchObject({
      status: "pending",
      anchor_state: "outdated",
    });
    // an edit elsewhere moves the suggestion instead
    const s2 = (await bob.api.post(url, { selection_start: 6, selection_end: 11, suggested_text: "3" })).body
      .suggestion;
    await alice.api.put(`/api/v1/files/${file.id}`, { content: "zero one 2 three" });
    const ok = await carol.api.post(`${url}/${s2.id}/accept`);
    expect(ok.status, ok.text).toBe(200);
    expect(await contentOf(file.id)).toBe("zero one 2 3");
  });

  it("If-Match on accept guards against a changed file", async () => {
    const file = await sharedFile("s4.md", "abc");
    const url = `/api/v1/files/${file.id}/suggestions`;
    const s = (await bob.api.post(url, { selection_start: 0, selection_end: 1, suggested_text: "A" })).body
      .suggestion;
    await alice.api.put(`/api/v1/files/${file.id}`, { tags: ["t"] });
    expectError(
      await carol.api.post(`${url}/${s.id}/accept`, undefined, { "if-match": file.etag }),
      412,
      "precondition_failed",
    );
    expect((await bob.api.get(`${url}/${s.id}`)).body.suggestion.status).toBe("pending");
    expect(await contentOf(file.id)).toBe("abc");
  });

  it("bad input gets the error body and changes nothing", async () => {
    const file = await sharedFile("s5.md", "hello");
    const url = `/api/v1/files/${file.id}/suggestions`;
    const bad: [Record<string, unknown>, number, string][] = [
      [{ selection_start: 0, selection_end: 5 }, 400, "validation_failed"],
      [{ selection_start: 0, suggested_text: "x" }, 400, "validation_failed"],
      [{ selection_start: 4, selection_end: 2, suggested_text: "x" }, 400, "invalid_range"],
      [{ selection_start: 0, selection_end: 50, suggested_text: "x" }, 400, "invalid_range"],
      [{ selection_start: 0, selection_end: 5, suggested_text: "hello" }, 400, "validation_failed"],
      [
        { selection_start: 0, selection_end: 5, suggested_text: "bye", original_text: "hullo" },
        409,
        "suggestion_stale",
      ],
      [
        { selection_start: 0, selection_end: 5, suggested_text: "bye", status: "accepted" },
        400,
        "validation_failed",
      ],
    ];
    for (const [body, status, code] of bad) expectError(await bob.api.post(url, body), status, code);
    expectError(
      await dave.api.post(url, { selection_start: 0, selection_end: 1, suggested_text: "x" }),
      404,
      "not_found",
    );
    expect((await alice.api.get(url)).body.suggestions).toEqual([]);
    const s = (await bob.api.post(url, { selection_start: 0, selection_end: 5, suggested_text: "bye" })).body
      .suggestion;
    expectError(
      await carol.api.request("PATCH", `${url}/${s.id}`, { json: { status: "pending" } }),
      400,
      "validation_failed",
    );
    expectError(await carol.api.post(`${url}/sg_nope/accept`), 404, "not_found");
    expectError(await dave.api.post(`${url}/${s.id}/accept`), 404, "not_found");
    expect(await contentOf(file.id)).toBe("hello");
  });

  it("suggestion events reach the file's audience", async () => {
    const file = await sharedFile("s6.md", "x y");
    const head = (await bob.api.get("/api/v1/changes?cursor=latest")).body.cursor;
    const s = (
      await bob.api.post(`/api/v1/files/${file.id}/suggestions`, {
        selection_start: 0,
        selection_end: 1,
        suggested_text: "X",
      })
    ).body.suggestion;
    await carol.api.post(`/api/v1/files/${file.id}/suggestions/${s.id}/accept`);
    const feed = (await bob.api.get(`/api/v1/changes?cursor=${head}`)).body.changes;
    const kinds = feed.map((c: any) => `${c.kind}:${c.id}`);
    expect(kinds).toEqual([`file:${file.id}`, `suggestion:${s.id}`]);
    expect(feed[1].suggestion.status).toBe("accepted");
  });
});

describe("concurrency", () => {
  it("two writers accepting suggestions and writing the same file at once never lose an update", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line${String(i).padStart(2, "0")}`);
    const file = await sharedFile("race.md", `${lines.join("\n")}\nfree-a\nfree-b\n`);
    const url = `/api/v1/files/${file.id}/suggestions`;
    const suggestions: string[] = [];
    let offset = 0;
    for (const line of lines) {
      const res = await bob.api.post(url, {
        selection_start: offset,
        selection_end: offset + line.length,
        suggested_text: line.toUpperCase(),
        original_text: line,
      });
      expect(res.status, res.text).toBe(201);
      suggestions.push(res.body.suggestion.id);
      offset += line.length + 1;
    }
    // Read-modify-write with If-Match, retrying on 412: the safe way to write by hand.
    const edit = async (who: TestUser, marker: string, times: number) => {
      for (let n = 0; n < times; n++) {
        for (;;) {
          const cur = await who.api.get(`/api/v1/files/${file.id}`);
          const next = cur.body.content.replace(
            new RegExp(`free-${marker}(\\+\\d+)?\n`),
            `free-${marker}+${n}\n`,
          );
          const put = await who.api.put(
            `/api/v1/files/${file.id}`,
            { content: next },
            { "if-match": cur.body.etag },
          );
          if (put.status === 200) break;
          expectError(put, 412, "precondition_failed");
        }
      }
    };
    const accept = async (who: TestUser, ids: string[]) => {
      for (const id of ids) {
        const res = await who.api.post(`${url}/${id}/accept`);
        expect(res.status, res.text).toBe(200);
      }
    };
    await Promise.all([
      accept(
        carol,
        suggestions.filter((_, i) => i % 2 === 0),
      ),
      accept(
        alice,
        suggestions.filter((_, i) => i % 2 === 1),
      ),
      edit(carol, "a", 5),
      edit(alice, "b", 5),
    ]);
    const final = await contentOf(file.id);
    expect(final).toBe(`${lines.map((l) => l.toUpperCase()).join("\n")}\nfree-a+4\nfree-b+4\n`);
    const versions = (await alice.api.get(`/api/v1/files/${file.id}/versions?limit=1000`)).body.versions;
    expect(versions).toHaveLength(1 + 12 + 10);
  });
});

describe("anchor arithmetic", () => {
  it("finds the one edited region and maps ranges around it", () => {
    const edit = editRegion("abcdef", "abXYdef");
    expect(edit).toEqual({ start: 2, oldEnd: 3, newEnd: 4 });
    expect(mapRange(0, 2, edit)).toEqual({ start: 0, end: 2 });
    expect(mapRange(3, 6, edit)).toEqual({ start: 4, end: 7 });
    expect(mapRange(1, 4, edit)).toBeNull();
    const insert = editRegion("abc", "abXc");
    expect(mapRange(2, 3, insert)).toEqual({ start: 3, end: 4 });
    expect(mapRange(0, 2, insert)).toEqual({ start: 0, end: 2 });
  });
});
