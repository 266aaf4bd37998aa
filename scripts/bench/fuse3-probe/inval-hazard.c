// The kill -9 hazard of telling the kernel a name went away (docs/mount.md, the libfuse3 plan, step
// 5), shown on a libfuse3 low-level filesystem: a lookup in the root is held here (names starting
// with `slow-` are answered after 3 s); on SIGUSR2 a thread of its own asks the kernel to drop the
// name `x` in the root (fuse_lowlevel_notify_inval_entry), which takes the root's lock that the
// held lookup keeps; then the process is killed.
//
//   eager      the invalidation is sent at once: it waits for the lock in the kernel, where no
//              signal reaches it, so a kill -9 leaves that thread behind, the process never ends,
//              the connection is never aborted and the lookup waits for good (until
//              /sys/fs/fuse/connections/N/abort or `umount -f`).
//   deferred   the invalidation waits while a request about the root is being answered here (the
//              plan's rule): the same kill -9 ends the process at once.
//
// Usage: inval-hazard MOUNTPOINT eager|deferred. Run by scripts/bench/fuse3-probe/inval-hazard.sh.
#define FUSE_USE_VERSION 34
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct fuse_session *session;
static int deferred;
static volatile sig_atomic_t asked;
static int in_flight; // requests about the root being answered here

static void on_usr2(int sig) {
  (void)sig;
  asked = 1;
}

static void *invalidator(void *arg) {
  (void)arg;
  for (;;) {
    usleep(1000);
    if (!asked) continue;
    if (deferred && __atomic_load_n(&in_flight, __ATOMIC_SEQ_CST) > 0) continue; // later
    asked = 0;
    fprintf(stderr, "invalidating\n");
    int rc = fuse_lowlevel_notify_inval_entry(session, FUSE_ROOT_ID, "x", 1);
    fprintf(stderr, "invalidated (%d)\n", rc);
  }
  return NULL;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  (void)parent;
  __atomic_add_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
  if (!strncmp(name, "slow-", 5)) {
    fprintf(stderr, "holding the lookup of %s\n", name);
    sleep(3);
  }
  fuse_reply_err(req, ENOENT);
  __atomic_sub_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  struct stat st = {.st_ino = ino, .st_mode = S_IFDIR | 0755, .st_nlink = 2};
  fuse_reply_attr(req, &st, 1.0);
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "eager") && strcmp(argv[2], "deferred"))) {
    fprintf(stderr, "usage: %s MOUNTPOINT eager|deferred\n", argv[0]);
    return 2;
  }
  deferred = !strcmp(argv[2], "deferred");
  char *fargv[] = {argv[0]};
  struct fuse_args args = FUSE_ARGS_INIT(1, fargv);
  struct fuse_lowlevel_ops ops = {.lookup = op_lookup, .getattr = op_getattr};
  session = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (!session || fuse_session_mount(session, argv[1])) return 1;
  signal(SIGUSR2, on_usr2);
  pthread_t t;
  pthread_create(&t, NULL, invalidator, NULL);
  fprintf(stderr, "mounted\n");
  struct fuse_loop_config cfg = {.clone_fd = 0, .max_idle_threads = 10};
  fuse_session_loop_mt(session, &cfg);
  fuse_session_unmount(session);
  return 0;
}
