// The mount keeps what it was given across restarts of its daemon: its cache dir (journal,
// local-only files) is keyed by the service's identity, not by the port `--serve` happened to get,
// and `--serve` listens on the same port again so the TXTFS_URL it printed stays valid.
import { describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";
import {
  flatIndex,
  makeMountDirs,
  removeMountDirs,
  sh,
  startMount,
  txtfsEnv,
  undoAfterEach,
} from "../helpers/mount.ts";

const later = undoAfterEach();

describe("restarts", () => {
  it("a kill -9 right after cp -r loses nothing; local-only files survive a clean stop; the URL stays", async () => {
    const dirs = makeMountDirs();
    later(() => removeMountDirs(dirs));
    let m = await startMount(dirs, { defaultCacheDir: true });
    later(() => m.stop());
    const url = m.url;
    const src = `${dirs.base}/src`;
    const copied = await sh(
      `mkdir -p ${src}/notes && for i in $(seq 1 100); do echo "note $i" > ${src}/notes/n$i.md; done && ` +
        `printf 'PNG' > ${src}/notes/image.png && cp -r ${src}/notes ${m.mnt}/ && ls ${m.mnt}/notes | wc -l`,
      { timeoutMs: 30_000 },
    );
    expect(copied.stdout.trim()).toBe("101");
    m.child.kill("SIGKILL"); // no chance to flush: the journal on disk is all there is
    await m.exited;
    await sh(`fusermount -uz ${dirs.mnt} 2>/dev/null; true`);

    m = await startMount(dirs, { defaultCacheDir: true });
    expect(m.url).toBe(url);
    const sync = await runTxtfs(["sync", m.mnt], txtfsEnv(dirs));
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const index = await flatIndex(m.api);
    expect(index.files.filter((f) => /^n\d+\.md$/.test(f.name))).toHaveLength(100);
    expect((await sh(`cat ${m.mnt}/notes/n57.md ${m.mnt}/notes/image.png`)).stdout).toBe("note 57\nPNG");

    // A clean stop and start: local-only files are still there.
    await m.stop();
    m = await startMount(dirs, { defaultCacheDir: true });
    expect(m.url).toBe(url);
    expect((await sh(`cat ${m.mnt}/notes/image.png`)).stdout).toBe("PNG");
  });
});
