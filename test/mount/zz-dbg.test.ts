import { it } from "vitest";
import { sh } from "../helpers/mount.ts";

it("dbg", async () => {
  const d = "t10";
  const r = await sh(
    `mkdir ${d}; cd ${d}; for i in $(seq 1 10); do printf 'banana\\ncat\\n' > v$i.md && vim -es -c '%s/a/b/g' -c wq v$i.md </dev/null || echo "vim $i failed"; done; ` +
      "for i in $(seq 1 10); do printf '%s:' $i; tr '\\n' ' ' < v$i.md; echo; done",
    { cwd: "/var/tmp/i13m-manual/mnt", timeoutMs: 25000 },
  );
  console.log(JSON.stringify(r));
}, 40000);
