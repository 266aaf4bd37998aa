#!/usr/bin/env bash
# Shows the kill -9 hazard of telling the kernel a name went away, and the rule the libfuse3 plan
# answers it with (inval-hazard.c; docs/mount.md). For each mode: a lookup held by the daemon, a
# name invalidation asked meanwhile, kill -9; then whether the daemon ended and how the lookup
# ended. A connection left hung is aborted with `umount -f` (so: root). Needs gcc and libfuse3-dev.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/txtfs-inval-hazard-XXXXXX)
cleanup() {
  for m in "$work"/mnt-*; do
    if grep -q " $m " /proc/mounts; then umount -f "$m" 2>/dev/null || true; sleep 0.5; umount "$m" 2>/dev/null || umount -l "$m"; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck disable=SC2046 # pkg-config's flags are words
gcc -O2 -Wall -o "$work/inval-hazard" "$here/inval-hazard.c" $(pkg-config --cflags --libs fuse3)
now_ms() { echo $(($(date +%s%N) / 1000000)); }
for mode in eager deferred; do
  mnt="$work/mnt-$mode"
  mkdir "$mnt"
  "$work/inval-hazard" "$mnt" "$mode" 2>"$work/$mode.log" &
  pid=$!
  disown "$pid" # its kill is this script's doing: no "Killed" notice
  for _ in $(seq 500); do grep -q " $mnt " /proc/mounts && break; sleep 0.01; done
  (timeout 30 stat "$mnt/slow-a" >"$work/$mode.stat" 2>&1 || true; now_ms >"$work/$mode.done") &
  lookup=$!
  sleep 0.3
  kill -USR2 "$pid" # the invalidation, while the lookup is held
  sleep 0.3
  killed=$(now_ms)
  kill -9 "$pid"
  sleep 1
  if grep -qs "State:.*D" /proc/"$pid"/task/*/status; then
    ended="no, a thread of it waits in the kernel (state D) and the process cannot end"
    umount -f "$mnt" 2>/dev/null || true # aborts the connection (fuse's umount_begin)
    how=" (once \`umount -f\` aborted the connection)"
  else
    ended="yes"
    how=""
  fi
  wait "$lookup"
  grep -q " $mnt " /proc/mounts && umount "$mnt"
  echo "$mode: the daemon ended after kill -9: $ended; the held lookup ended $(($(cat "$work/$mode.done") - killed)) ms after the kill$how: $(head -1 "$work/$mode.stat")"
done
