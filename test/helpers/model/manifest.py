# Prints one JSON manifest per root given: every folder, every file's exact bytes (base64) and, for
# notes, user.txtfs.id and user.txtfs.tags. Run in a child process so the test process itself never
# touches the mount. Editor swap files, vim's 4913 probe and libfuse's .fuse_hidden* are expected to
# differ between a mount and a local directory and are left out.
import base64, json, os, re, sys

SKIP = re.compile(r"(^|/)(\.[^/]*\.sw[a-z]|4913|\.fuse_hidden[^/]*)$")

def xattr(path, name):
    try:
        return os.getxattr(path, name).decode("utf-8", "replace")
    except OSError:
        return None

def manifest(root):
    files, dirs, ids, tags = {}, [], {}, {}
    for here, subdirs, names in os.walk(root):
        subdirs.sort()
        for d in subdirs:
            rel = os.path.relpath(os.path.join(here, d), root)
            if not SKIP.search(rel):
                dirs.append(rel)
        for n in sorted(names):
            full = os.path.join(here, n)
            rel = os.path.relpath(full, root)
            if SKIP.search(rel):
                continue
            try:
                with open(full, "rb") as f:
                    files[rel] = base64.b64encode(f.read()).decode()
            except OSError as e:
                files[rel] = "!" + e.strerror
            if n.endswith(".md") or n.endswith(".txt"):
                ids[rel] = xattr(full, "user.txtfs.id")
                tags[rel] = xattr(full, "user.txtfs.tags")
    return {"files": files, "dirs": sorted(dirs), "ids": ids, "tags": tags}

json.dump([manifest(r) for r in sys.argv[1:]], sys.stdout)
