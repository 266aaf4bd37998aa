// The largest attachment and the account's quota, through a real mount of `txtfs mount --serve`
// whose in-process service reads TXTFS_ATTACHMENT_MAX_BYTES and TXTFS_ATTACHMENT_QUOTA_BYTES as
// `txtfs serve` does: cp and truncate past them fail at once (File too large, Disk quota
// exceeded), and the service holds only what the programs were told was written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MountFixture, mountFixture } from "../helpers/mount.ts";

let m: MountFixture;
beforeAll(async () => {
  m = mountFixture();
  await m.start({ env: { TXTFS_ATTACHMENT_MAX_BYTES: "10000", TXTFS_ATTACHMENT_QUOTA_BYTES: "25000" } });
}, 60_000);
afterAll(() => m?.close());

/** Each attachment's size on the service, by name, once everything waiting was delivered. */
async function sizesOnService(): Promise<Map<string, number>> {
  await m.sync();
  const listed = (await m.current.api.get("/api/v1/attachments")).body.attachments as {
    name: string;
    size: number;
  }[];
  return new Map(listed.map((a) => [a.name, a.size]));
}

describe("the service's largest attachment, in the mount", () => {
  it("cp and truncate past it fail with EFBIG at once; what fits goes up byte-exact", async () => {
    const src = `${m.dirs.base}/big.src`;
    const r = await m.sh(
      [
        `head -c 20000 /dev/urandom > '${src}'; head -c 9000 /dev/urandom > fits.bin`,
        `cp '${src}' big.bin; echo "cp=$?"`,
        'truncate -s 12000 fits.bin; echo "truncate=$?"',
        "stat -c %s fits.bin big.bin",
      ].join("\n"),
    );
    expect(r.stdout).toContain("cp=1");
    expect(r.stdout).toContain("truncate=1");
    expect(r.stderr).toMatch(/cp: error writing 'big.bin': File too large/);
    expect(r.stderr).toMatch(/truncate: failed to truncate 'fits.bin' at 12000 bytes: File too large/);
    expect(r.stdout).toMatch(/^9000\n0\n$/m);
    expect(await sizesOnService()).toEqual(
      new Map([
        ["fits.bin", 9000],
        ["big.bin", 0],
      ]),
    );
  });

  it("cp past the account's quota fails with EDQUOT at once; a removal frees it", async () => {
    const src = `${m.dirs.base}/quota.src`;
    const r = await m.sh(
      [
        `head -c 9000 /dev/urandom > '${src}'`,
        `cp '${src}' q1.bin; echo "q1=$?"`, // 9000 + 9000 of 25000
        `cp '${src}' q2.bin; echo "q2=$?"`, // 27000: refused
        "stat -c %s q2.bin",
      ].join("\n"),
    );
    expect(r.stdout).toContain("q1=0");
    expect(r.stdout).toContain("q2=1");
    expect(r.stderr).toMatch(/cp: error writing 'q2.bin': Disk quota exceeded/);
    expect(r.stdout).toMatch(/^0$/m);
    await m.sh("rm fits.bin"); // its delete lands before sh returns (it syncs)
    const again = await m.sh(`cp '${src}' q2.bin; echo "q2=$?"`);
    expect(again.stdout).toContain("q2=0");
    expect(await sizesOnService()).toEqual(
      new Map([
        ["big.bin", 0],
        ["q1.bin", 9000],
        ["q2.bin", 9000],
      ]),
    );
  });
});
