// txtfs's binding of libfuse3's low-level API (docs/architecture.md, "The FUSE adapter"). It is
// thin on purpose: every request is handed to JavaScript (src/fuse/ops/), which owns the node
// table and answers with the reply functions below, from its own thread (libfuse3's replies may
// come from any thread, after the handler returned). What stays here:
//
// - the session, one thread reading requests (no handler blocks, so one is enough) and the hand-over
//   of each request to JavaScript through a thread-safe function;
// - answers that need nothing of JavaScript: opendir ENOSYS (the kernel then sends no
//   opendir/releasedir again and keeps each listing in its page cache), link EPERM, and
//   extended attributes outside `user.txtfs.*`; and what src/fuse/kernelCache/index.ts lists;
// - telling the kernel of changes it did not make (notify_inval_*), from a thread of its own, and
//   only while no request about the node concerned is being answered here: a notification waits
//   for the locks such a request holds in the kernel, and if the daemon were killed meanwhile, the
//   thread sending it could never end and the mount would hang (scripts/bench/fuse3-probe/
//   inval-hazard.sh shows it). Requests are counted by node in buckets (a shared bucket only delays
//   a notification).
#define FUSE_USE_VERSION 34
#define NAPI_VERSION 8
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <fuse_lowlevel.h>
#include <node_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef TXTFS_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif
#include <time.h>
#include <unistd.h>

#include "flushes.h"
#include "held.h"
#include "js.h"
#include "names.h"
#include "opens.h"
#include "ops.h"

// The longest name a folder holds (statfs's namemax): a longer one is ENAMETOOLONG, never "absent".
#define NAME_MAX_BYTES 255

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != napi_ok) {                                                                       \
      napi_throw_error(env, NULL, "txtfs-fuse3: " #call " failed");                                \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

// ------------------------------------------------------------------------ requests in flight

#define BUCKETS 65536
static atomic_int in_flight[BUCKETS];
static inline unsigned bucket(fuse_ino_t ino) { return (unsigned)((ino * 0x9E3779B97F4A7C15ull) >> 48); }

// One request on its way to JavaScript and back; JavaScript holds its address (binding.ts: Request).
typedef struct call {
  int op;
  fuse_req_t req;
  fuse_ino_t ino, ino2; // counted in flight (ino2: a rename's new folder; 0: none)
  uint64_t fh;
  int64_t a, b;  // op-specific numbers
  char *name;     // op-specific strings (copied: libfuse's buffer is reused once the handler returns)
  char *name2;
  char *data;     // a write's bytes, a setxattr's value (copied too)
  size_t len;
  struct stat attr; // setattr
  uint64_t *forgets; // forget_multi: pairs of (ino, nlookup)
  size_t nforgets;
  uid_t uid; // who asked: what it makes is theirs (create, mkdir, symlink, mknod)
  gid_t gid;
} call_t;

// Requests handed to JavaScript and not yet done with: while any is, the loop does not spin.
static atomic_int with_js;

static void release_call(call_t *c) {
  atomic_fetch_sub(&with_js, 1);
  if (c->req) {
    atomic_fetch_sub(&in_flight[bucket(c->ino)], 1);
    if (c->ino2) atomic_fetch_sub(&in_flight[bucket(c->ino2)], 1);
  }
  free(c->name);
  free(c->name2);
  free(c->data);
  free(c->forgets);
  free(c);
}

// ------------------------------------------------------------------------ the session

static struct fuse_session *session;
static pthread_t loop_thread;
static int loop_started;
static napi_threadsafe_function dispatch_fn; // (op, request, ino, ...) => void
static napi_threadsafe_function loop_end_fn; // () => void, once the loop ended
static atomic_int stopping;

static call_t *new_call(int op, fuse_req_t req, fuse_ino_t ino) {
  call_t *c = calloc(1, sizeof *c);
  c->op = op;
  c->req = req;
  c->ino = ino;
  atomic_fetch_add(&with_js, 1);
  if (req) {
    atomic_fetch_add(&in_flight[bucket(ino)], 1);
    const struct fuse_ctx *ctx = fuse_req_ctx(req);
    c->uid = ctx->uid;
    c->gid = ctx->gid;
  }
  return c;
}

static void dispatch_call(call_t *c) {
  if (atomic_load(&stopping) ||
      napi_call_threadsafe_function(dispatch_fn, c, napi_tsfn_nonblocking) != napi_ok) {
    if (c->req) fuse_reply_err(c->req, EIO);
    release_call(c);
  }
}

static void send_held(fuse_ino_t ino, uint64_t fh, off_t off, char *data, size_t len) {
  call_t *h = new_call(OP_HELD, NULL, ino);
  h->fh = fh, h->b = off, h->data = data, h->len = len;
  dispatch_call(h);
}

// Every request goes to JavaScript after the writes held before it (held.c).
static void hand_over(call_t *c) {
  held_hand_over(send_held);
  if (c->req && c->ino2) atomic_fetch_add(&in_flight[bucket(c->ino2)], 1);
  dispatch_call(c);
}

static char *copy_str(const char *s) { return s ? strdup(s) : NULL; }

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  if (strlen(name) > NAME_MAX_BYTES) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  if (names_absent(parent, name)) { // names.c: kept by the kernel for no time at all
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    fuse_reply_entry(req, &e);
    return;
  }
  call_t *c = new_call(OP_LOOKUP, req, parent);
  c->name = copy_str(name);
  hand_over(c);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  fuse_reply_none(req);
  call_t *c = new_call(OP_FORGET, NULL, ino);
  c->forgets = malloc(2 * sizeof *c->forgets);
  c->forgets[0] = ino;
  c->forgets[1] = nlookup;
  c->nforgets = 1;
  hand_over(c);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  fuse_reply_none(req);
  call_t *c = new_call(OP_FORGET, NULL, 0);
  c->forgets = malloc(2 * count * sizeof *c->forgets + 1);
  for (size_t i = 0; i < count; i++) {
    c->forgets[2 * i] = forgets[i].ino;
    c->forgets[2 * i + 1] = forgets[i].nlookup;
  }
  c->nforgets = count;
  hand_over(c);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  // A note opened here is also stat'ed here: the attributes JavaScript gave when it marked it
  // openable (opens.c). Not through a handle of JavaScript's, which may show its own size.
  struct stat st;
  double timeout;
  if ((!fi || native_fh(fi->fh)) && opens_attr(ino, &st, &timeout)) {
    fuse_reply_attr(req, &st, timeout);
    return;
  }
  call_t *c = new_call(OP_GETATTR, req, ino);
  c->a = fi ? 1 : 0;
  c->fh = fi ? fi->fh : 0;
  hand_over(c);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi) {
  if (to_set & FUSE_SET_ATTR_SIZE) { // a truncate by path may be any handle's
    if (fi) flushes_written(fi->fh);
    else flushes_all_written();
  }
  call_t *c = new_call(OP_SETATTR, req, ino);
  c->attr = *attr;
  c->a = to_set;
  c->b = fi ? 1 : 0;
  c->fh = fi ? fi->fh : 0;
  hand_over(c);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino) { hand_over(new_call(OP_READLINK, req, ino)); }

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev) {
  call_t *c = new_call(OP_MKNOD, req, parent); // fifos, sockets, device nodes: kept on this device
  c->name = copy_str(name);
  c->a = mode;
  c->b = (int64_t)rdev;
  hand_over(c);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode) {
  call_t *c = new_call(OP_MKDIR, req, parent);
  c->name = copy_str(name);
  c->a = mode;
  hand_over(c);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) {
  call_t *c = new_call(OP_UNLINK, req, parent);
  c->name = copy_str(name);
  hand_over(c);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) {
  call_t *c = new_call(OP_RMDIR, req, parent);
  c->name = copy_str(name);
  hand_over(c);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name) {
  call_t *c = new_call(OP_SYMLINK, req, parent);
  c->name = copy_str(name);
  c->name2 = copy_str(link);
  hand_over(c);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags) {
  call_t *c = new_call(OP_RENAME, req, parent);
  c->ino2 = newparent != parent ? newparent : 0;
  c->name = copy_str(name);
  c->name2 = copy_str(newname);
  c->a = flags;
  hand_over(c);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  (void)ino, (void)newparent, (void)newname;
  fuse_reply_err(req, EPERM); // hard links have no remote counterpart
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  if (opens_here(ino, fi)) { // grep, cat: a note JavaScript marked openable (opens.c)
    fuse_reply_open(req, fi);
    return;
  }
  call_t *c = new_call(OP_OPEN, req, ino);
  c->a = fi->flags;
  hand_over(c);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi) {
  call_t *c = new_call(OP_CREATE, req, parent);
  c->name = copy_str(name);
  c->a = mode;
  c->b = fi->flags;
  hand_over(c);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  call_t *c = new_call(OP_READ, req, ino);
  c->fh = fi->fh;
  c->a = (int64_t)size;
  c->b = off;
  hand_over(c);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  flushes_written(fi->fh);
  if (held_write(ino, fi->fh, buf, size, off)) { // a shell's pieces of a new note (held.c)
    fuse_reply_write(req, size);
    return;
  }
  call_t *c = new_call(OP_WRITE, req, ino);
  c->fh = fi->fh;
  c->data = malloc(size ? size : 1);
  memcpy(c->data, buf, size);
  c->len = size;
  c->b = off;
  hand_over(c);
}

static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  uint64_t writes = 0;
  // A read-only handle made here, or one nothing was written through since (flushes.c).
  if (native_fh(fi->fh) || flushes_clean(fi->fh, &writes)) {
    fuse_reply_err(req, 0);
    return;
  }
  call_t *c = new_call(OP_FLUSH, req, ino);
  c->fh = fi->fh;
  c->a = (int64_t)writes;
  hand_over(c);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  if (native_fh(fi->fh) && opens_released_here(ino)) {
    fuse_reply_err(req, 0);
    return;
  }
  held_mark(fi->fh, 0); // what it holds still goes first (hand_over); its number may be reused
  flushes_released(fi->fh);
  call_t *c = new_call(OP_RELEASE, req, ino);
  c->fh = fi->fh;
  c->a = fi->flags;
  hand_over(c);
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  call_t *c = new_call(OP_FSYNC, req, ino);
  c->fh = fi->fh;
  c->a = datasync;
  hand_over(c);
}

// The kernel keeps each folder's listing itself (FOPEN_CACHE_DIR, what an ENOSYS opendir implies
// since Linux 5.1): listings are asked for with READDIRPLUS only, by node.
static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino, (void)fi;
  fuse_reply_err(req, ENOSYS);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  call_t *c = new_call(OP_READDIRPLUS, req, ino);
  c->a = (int64_t)size;
  c->b = off;
  hand_over(c);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  ll_readdirplus(req, ino, size, off, fi); // never asked for (READDIRPLUS is always on); same answer
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino) { hand_over(new_call(OP_STATFS, req, ino)); }

// `ls -l` asks every file for its SELinux label and ACL, the kernel asks security.capability before
// writes: only user.txtfs.* exists. Other namespaces are unsupported (EOPNOTSUPP, never ENOSYS: that
// would turn every extended attribute off), other user.* names simply absent.
static int foreign_xattr(const char *name) {
  if (strncmp(name, "user.", 5) != 0) return EOPNOTSUPP;
  if (strncmp(name, "user.txtfs.", 11) != 0) return ENODATA;
  return 0;
}

static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) {
  int err = foreign_xattr(name);
  if (err) {
    fuse_reply_err(req, err);
    return;
  }
  call_t *c = new_call(OP_GETXATTR, req, ino);
  c->name = copy_str(name);
  c->a = (int64_t)size;
  hand_over(c);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags) {
  call_t *c = new_call(OP_SETXATTR, req, ino);
  c->name = copy_str(name);
  c->data = malloc(size ? size : 1);
  memcpy(c->data, value, size);
  c->len = size;
  c->a = flags;
  hand_over(c);
}

static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  call_t *c = new_call(OP_LISTXATTR, req, ino);
  c->a = (int64_t)size;
  hand_over(c);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name) {
  call_t *c = new_call(OP_REMOVEXATTR, req, ino);
  c->name = copy_str(name);
  hand_over(c);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  // Listings always carry attributes: one request per folder instead of a lookup per name.
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
  // `open(O_TRUNC)` stays an open then a truncate, as the path-based operations expect.
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  // Every write reaches the daemon (write-behind is the vfs's, with its journal), never the kernel's.
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  conn->want &= ~FUSE_CAP_POSIX_ACL;
}

static const struct fuse_lowlevel_ops ops = {
    .init = ll_init,
    .lookup = ll_lookup,
    .forget = ll_forget,
    .forget_multi = ll_forget_multi,
    .getattr = ll_getattr,
    .setattr = ll_setattr,
    .readlink = ll_readlink,
    .mknod = ll_mknod,
    .mkdir = ll_mkdir,
    .unlink = ll_unlink,
    .rmdir = ll_rmdir,
    .symlink = ll_symlink,
    .rename = ll_rename,
    .link = ll_link,
    .open = ll_open,
    .read = ll_read,
    .write = ll_write,
    .flush = ll_flush,
    .release = ll_release,
    .fsync = ll_fsync,
    .opendir = ll_opendir,
    .readdir = ll_readdir,
    .readdirplus = ll_readdirplus,
    .statfs = ll_statfs,
    .setxattr = ll_setxattr,
    .getxattr = ll_getxattr,
    .listxattr = ll_listxattr,
    .removexattr = ll_removexattr,
    .create = ll_create,
};

// ------------------------------------------------------------------------ notifications

typedef struct note {
  struct note *next;
  int entry; // 1: notify_inval_entry(ino = folder, name); 0: notify_inval_inode(ino, off, len)
  fuse_ino_t ino;
  int64_t off, len;
  char *name;
} note_t;

static note_t *notes_head, *notes_tail;
static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t notes_cond = PTHREAD_COND_INITIALIZER;
static pthread_t notes_thread;
static int notes_started, notes_quit;

static void *notes_loop(void *arg) {
  (void)arg;
  pthread_mutex_lock(&notes_lock);
  for (;;) {
    while (!notes_head && !notes_quit) pthread_cond_wait(&notes_cond, &notes_lock);
    if (notes_quit) break;
    // The first notification whose node has no request being answered goes; the others wait.
    note_t *prev = NULL, *n = notes_head;
    while (n && atomic_load(&in_flight[bucket(n->ino)]) > 0) prev = n, n = n->next;
    if (!n) {
      pthread_mutex_unlock(&notes_lock);
      usleep(200);
      pthread_mutex_lock(&notes_lock);
      continue;
    }
    if (prev) prev->next = n->next;
    else notes_head = n->next;
    if (notes_tail == n) notes_tail = prev;
    pthread_mutex_unlock(&notes_lock);
    // ENOENT: the kernel does not have that node or name (any more): nothing to drop.
    if (n->entry) fuse_lowlevel_notify_inval_entry(session, n->ino, n->name, strlen(n->name));
    else fuse_lowlevel_notify_inval_inode(session, n->ino, n->off, n->len);
    free(n->name);
    free(n);
    pthread_mutex_lock(&notes_lock);
  }
  pthread_mutex_unlock(&notes_lock);
  return NULL;
}

static void queue_note(note_t *n) {
  pthread_mutex_lock(&notes_lock);
  if (notes_tail) notes_tail->next = n;
  else notes_head = n;
  notes_tail = n;
  pthread_cond_signal(&notes_cond);
  pthread_mutex_unlock(&notes_lock);
}

// ------------------------------------------------------------------------ JavaScript values

static napi_value num(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

static napi_value str(napi_env env, const char *s) {
  napi_value out;
  if (!s) napi_get_null(env, &out);
  else napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &out);
  return out;
}

static double prop_num(napi_env env, napi_value obj, const char *key, double dflt) {
  napi_value v;
  bool has = false;
  if (napi_has_named_property(env, obj, key, &has) != napi_ok || !has) return dflt;
  napi_get_named_property(env, obj, key, &v);
  bool is_date = false;
  napi_is_date(env, v, &is_date);
  double out = dflt;
  if (is_date) napi_get_date_value(env, v, &out);
  else if (napi_get_value_double(env, v, &out) != napi_ok) return dflt;
  return out;
}

// A vfs Stat (mode, size, times as Date or ms, nlink, uid, gid, blocks, rdev) as a struct stat of node `ino`.
static void to_stat(napi_env env, napi_value obj, fuse_ino_t ino, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_mode = (mode_t)prop_num(env, obj, "mode", 0);
  st->st_size = (off_t)prop_num(env, obj, "size", 0);
  st->st_nlink = (nlink_t)prop_num(env, obj, "nlink", 1);
  // The daemon's ids, asked once: as defaults here they were two system calls per entry of a listing.
  static uid_t own_uid = (uid_t)-1;
  static gid_t own_gid = (gid_t)-1;
  if (own_uid == (uid_t)-1) own_uid = getuid(), own_gid = getgid();
  st->st_uid = (uid_t)prop_num(env, obj, "uid", own_uid);
  st->st_gid = (gid_t)prop_num(env, obj, "gid", own_gid);
  st->st_rdev = (dev_t)prop_num(env, obj, "rdev", 0);
  st->st_blksize = 4096;
  st->st_blocks = (blkcnt_t)prop_num(env, obj, "blocks", (double)((st->st_size + 511) / 512));
  st->st_mtim = ms_to_timespec(prop_num(env, obj, "mtime", 0));
  st->st_atim = ms_to_timespec(prop_num(env, obj, "atime", 0));
  st->st_ctim = ms_to_timespec(prop_num(env, obj, "ctime", 0));
}

static double ts_to_ms(struct timespec ts) { return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6; }

// Builds the JavaScript arguments of one request and calls dispatch(op, request, ino, ...rest).
static void call_js(napi_env env, napi_value fn, void *context, void *data) {
  (void)context;
  call_t *c = data;
  if (!env) { // the function is being torn down: nobody will answer
    if (c->req) fuse_reply_err(c->req, EIO);
    release_call(c);
    return;
  }
  napi_value argv[8], undefined;
  napi_get_undefined(env, &undefined);
  size_t argc = 3;
  argv[0] = num(env, c->op);
  argv[1] = c->req ? num(env, (double)(uintptr_t)c) : undefined;
  argv[2] = num(env, (double)c->ino);
  for (int i = 3; i < 8; i++) argv[i] = undefined;
  switch (c->op) {
  case OP_LOOKUP:
  case OP_UNLINK:
  case OP_RMDIR:
  case OP_REMOVEXATTR:
    argv[3] = str(env, c->name);
    argc = 4;
    break;
  case OP_FORGET: { // (pairs: Float64Array of ino, nlookup, ...)
    napi_value ab, arr;
    void *raw;
    napi_create_arraybuffer(env, c->nforgets * 2 * sizeof(double), &raw, &ab);
    for (size_t i = 0; i < 2 * c->nforgets; i++) ((double *)raw)[i] = (double)c->forgets[i];
    napi_create_typedarray(env, napi_float64_array, c->nforgets * 2, ab, 0, &arr);
    argv[3] = arr;
    argc = 4;
    break;
  }
  case OP_GETATTR: // (fh or undefined)
    if (c->a) argv[3] = num(env, (double)c->fh);
    argc = 4;
    break;
  case OP_SETATTR: { // (toSet, {mode, uid, gid, size, atime, mtime}, fh or undefined)
    napi_value o;
    napi_create_object(env, &o);
    napi_set_named_property(env, o, "mode", num(env, c->attr.st_mode));
    napi_set_named_property(env, o, "uid", num(env, c->attr.st_uid));
    napi_set_named_property(env, o, "gid", num(env, c->attr.st_gid));
    napi_set_named_property(env, o, "size", num(env, (double)c->attr.st_size));
    napi_set_named_property(env, o, "atime", num(env, ts_to_ms(c->attr.st_atim)));
    napi_set_named_property(env, o, "mtime", num(env, ts_to_ms(c->attr.st_mtim)));
    argv[3] = num(env, (double)c->a);
    argv[4] = o;
    if (c->b) argv[5] = num(env, (double)c->fh);
    argc = 6;
    break;
  }
  case OP_MKDIR: // (name, mode, uid, gid)
    argv[3] = str(env, c->name);
    argv[4] = num(env, (double)c->a);
    argv[5] = num(env, (double)c->uid);
    argv[6] = num(env, (double)c->gid);
    argc = 7;
    break;
  case OP_MKNOD: // (name, mode, uid, gid, rdev)
    argv[3] = str(env, c->name);
    argv[4] = num(env, (double)c->a);
    argv[5] = num(env, (double)c->uid);
    argv[6] = num(env, (double)c->gid);
    argv[7] = num(env, (double)c->b);
    argc = 8;
    break;
  case OP_SYMLINK: // (name, target, uid, gid)
    argv[3] = str(env, c->name);
    argv[4] = str(env, c->name2);
    argv[5] = num(env, (double)c->uid);
    argv[6] = num(env, (double)c->gid);
    argc = 7;
    break;
  case OP_RENAME: // (name, newParent, newName, flags)
    argv[3] = str(env, c->name);
    argv[4] = num(env, (double)(c->ino2 ? c->ino2 : c->ino));
    argv[5] = str(env, c->name2);
    argv[6] = num(env, (double)c->a);
    argc = 7;
    break;
  case OP_OPEN: // (flags)
    argv[3] = num(env, (double)c->a);
    argc = 4;
    break;
  case OP_CREATE: // (name, mode, flags, uid, gid)
    argv[3] = str(env, c->name);
    argv[4] = num(env, (double)c->a);
    argv[5] = num(env, (double)c->b);
    argv[6] = num(env, (double)c->uid);
    argv[7] = num(env, (double)c->gid);
    argc = 8;
    break;
  case OP_READ: // (fh, size, offset)
  case OP_READDIRPLUS: // (0, size, offset)
    argv[3] = num(env, (double)c->fh);
    argv[4] = num(env, (double)c->a);
    argv[5] = num(env, (double)c->b);
    argc = 6;
    break;
  case OP_WRITE: // (fh, bytes, offset): the bytes are JavaScript's from here on
  case OP_HELD: {
    napi_value buf;
    void *raw;
    napi_create_buffer_copy(env, c->len, c->data, &raw, &buf);
    argv[3] = num(env, (double)c->fh);
    argv[4] = buf;
    argv[5] = num(env, (double)c->b);
    argc = 6;
    break;
  }
  case OP_FLUSH: // (fh)
    argv[3] = num(env, (double)c->fh);
    argc = 4;
    break;
  case OP_RELEASE: // (fh, flags)
  case OP_FSYNC:   // (fh, datasync)
    argv[3] = num(env, (double)c->fh);
    argv[4] = num(env, (double)c->a);
    argc = 5;
    break;
  case OP_SETXATTR: { // (name, value, flags)
    napi_value buf;
    void *raw;
    napi_create_buffer_copy(env, c->len, c->data, &raw, &buf);
    argv[3] = str(env, c->name);
    argv[4] = buf;
    argv[5] = num(env, (double)c->a);
    argc = 6;
    break;
  }
  case OP_GETXATTR: // (name, size)
    argv[3] = str(env, c->name);
    argv[4] = num(env, (double)c->a);
    argc = 5;
    break;
  case OP_LISTXATTR: // (size)
    argv[3] = num(env, (double)c->a);
    argc = 4;
    break;
  default:
    break;
  }
  // What JavaScript needs was copied into its values: only the request itself stays.
  free(c->name), c->name = NULL;
  free(c->name2), c->name2 = NULL;
  free(c->data), c->data = NULL;
  free(c->forgets), c->forgets = NULL;
  fuse_req_t req = c->req;
  if (!req) release_call(c);
  napi_value global;
  napi_get_global(env, &global);
  if (napi_call_function(env, global, fn, argc, argv, NULL) != napi_ok) {
    // dispatch threw before answering: the program must not wait forever (JavaScript logs it).
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
    }
  }
}

// ------------------------------------------------------------------------ replies (JavaScript)

// The request behind a Request number; the call is freed once answered (a request answers once).
static call_t *take_call(napi_env env, napi_value v) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || d <= 0) {
    napi_throw_type_error(env, NULL, "txtfs-fuse3: not a request");
    return NULL;
  }
  return (call_t *)(uintptr_t)d;
}

static void answered(call_t *c) {
  c->req = NULL; // fuse_reply_* freed it
  atomic_fetch_sub(&in_flight[bucket(c->ino)], 1);
  if (c->ino2) atomic_fetch_sub(&in_flight[bucket(c->ino2)], 1);
  release_call(c);
}

#define ARGS(n)                                                                                    \
  size_t argc = n;                                                                                 \
  napi_value argv[n];                                                                              \
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));                                     \
  call_t *c = take_call(env, argv[0]);                                                             \
  if (!c) return NULL;

static double arg_num(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

// replyErr(request, errno): 0 is success for operations that answer nothing else.
static napi_value reply_err(napi_env env, napi_callback_info info) {
  ARGS(2);
  int err = (int)arg_num(env, argv[1]);
  if (c->op == OP_FLUSH && err == 0) flushes_flushed(c->fh, (uint64_t)c->a); // clean again
  fuse_reply_err(c->req, err);
  answered(c);
  return NULL;
}

static void fill_entry(napi_env env, napi_value *argv, struct fuse_entry_param *e) {
  memset(e, 0, sizeof *e);
  e->ino = (fuse_ino_t)arg_num(env, argv[1]);
  if (e->ino) to_stat(env, argv[2], e->ino, &e->attr);
  e->entry_timeout = arg_num(env, argv[3]);
  e->attr_timeout = arg_num(env, argv[4]);
}

// replyEntry(request, ino, stat, entryTimeout, attrTimeout): ino 0 keeps an absence that long.
static napi_value reply_entry(napi_env env, napi_callback_info info) {
  ARGS(5);
  struct fuse_entry_param e;
  fill_entry(env, argv, &e);
  fuse_reply_entry(c->req, &e);
  answered(c);
  return NULL;
}

static void fill_open(napi_env env, napi_value fh, napi_value flags, struct fuse_file_info *fi) {
  memset(fi, 0, sizeof *fi);
  fi->fh = (uint64_t)arg_num(env, fh);
  int f = (int)arg_num(env, flags);
  fi->direct_io = (f & OPEN_DIRECT_IO) != 0;
  fi->keep_cache = (f & OPEN_KEEP_CACHE) != 0;
  fi->noflush = (f & OPEN_NO_FLUSH) != 0;
  if (f & OPEN_HOLD_WRITES) held_mark(fi->fh, 1); // before the kernel hears of the handle
  flushes_opened(fi->fh);
}

// replyCreate(request, ino, stat, entryTimeout, attrTimeout, fh, openFlags)
static napi_value reply_create(napi_env env, napi_callback_info info) {
  ARGS(7);
  struct fuse_entry_param e;
  struct fuse_file_info fi;
  fill_entry(env, argv, &e);
  fill_open(env, argv[5], argv[6], &fi);
  if (fuse_reply_create(c->req, &e, &fi) == -ENOENT) {
    // The program was interrupted meanwhile: nobody will release that handle (libfuse3 calls
    // release itself only in its high-level API). JavaScript learns nothing; the vfs keeps it.
  }
  answered(c);
  return NULL;
}

// replyAttr(request, ino, stat, attrTimeout)
static napi_value reply_attr(napi_env env, napi_callback_info info) {
  ARGS(4);
  struct stat st;
  to_stat(env, argv[2], (fuse_ino_t)arg_num(env, argv[1]), &st);
  fuse_reply_attr(c->req, &st, arg_num(env, argv[3]));
  answered(c);
  return NULL;
}

// replyOpen(request, fh, openFlags: OPEN_* of ops.h)
static napi_value reply_open(napi_env env, napi_callback_info info) {
  ARGS(3);
  struct fuse_file_info fi;
  fill_open(env, argv[1], argv[2], &fi);
  fuse_reply_open(c->req, &fi);
  answered(c);
  return NULL;
}

// replyBuf(request, buffer, length): a read's bytes, an extended attribute's value or names.
static napi_value reply_buf(napi_env env, napi_callback_info info) {
  ARGS(3);
  void *data = NULL;
  size_t len = 0;
  napi_get_buffer_info(env, argv[1], &data, &len);
  size_t want = (size_t)arg_num(env, argv[2]);
  fuse_reply_buf(c->req, data, want < len ? want : len);
  answered(c);
  return NULL;
}

// replyWrite(request, count)
static napi_value reply_write(napi_env env, napi_callback_info info) {
  ARGS(2);
  fuse_reply_write(c->req, (size_t)arg_num(env, argv[1]));
  answered(c);
  return NULL;
}

// replyReadlink(request, target)
static napi_value reply_readlink(napi_env env, napi_callback_info info) {
  ARGS(2);
  char target[4096];
  size_t len = 0;
  napi_get_value_string_utf8(env, argv[1], target, sizeof target, &len);
  fuse_reply_readlink(c->req, target);
  answered(c);
  return NULL;
}

// replyXattrSize(request, size): what a getxattr/listxattr of size 0 asks.
static napi_value reply_xattr_size(napi_env env, napi_callback_info info) {
  ARGS(2);
  fuse_reply_xattr(c->req, (size_t)arg_num(env, argv[1]));
  answered(c);
  return NULL;
}

// replyStatfs(request, {bsize, frsize, blocks, bfree, bavail, files, ffree, namemax})
static napi_value reply_statfs(napi_env env, napi_callback_info info) {
  ARGS(2);
  struct statvfs st;
  memset(&st, 0, sizeof st);
  st.f_bsize = (unsigned long)prop_num(env, argv[1], "bsize", 4096);
  st.f_frsize = (unsigned long)prop_num(env, argv[1], "frsize", 4096);
  st.f_blocks = (fsblkcnt_t)prop_num(env, argv[1], "blocks", 0);
  st.f_bfree = (fsblkcnt_t)prop_num(env, argv[1], "bfree", 0);
  st.f_bavail = (fsblkcnt_t)prop_num(env, argv[1], "bavail", 0);
  st.f_files = (fsfilcnt_t)prop_num(env, argv[1], "files", 0);
  st.f_ffree = (fsfilcnt_t)prop_num(env, argv[1], "ffree", 0);
  st.f_namemax = (unsigned long)prop_num(env, argv[1], "namemax", 255);
  fuse_reply_statfs(c->req, &st);
  answered(c);
  return NULL;
}

// replyDir(request, size, offset, dirIno, parentIno, names, inos, stats, entryTimeout, attrTimeout)
// -> how many of `names` were put in the answer. `names` are the folder's from the offset on (the
// first is the folder's max(0, offset - 2)-th); offsets: 1 = ".", 2 = "..", 3 + i = the folder's
// i-th name. Each name answered counts as a lookup of its node (the kernel forgets it later), "."
// and ".." do not.
static napi_value reply_dir(napi_env env, napi_callback_info info) {
  ARGS(10);
  size_t size = (size_t)arg_num(env, argv[1]);
  off_t off = (off_t)arg_num(env, argv[2]);
  fuse_ino_t dir = (fuse_ino_t)arg_num(env, argv[3]), up = (fuse_ino_t)arg_num(env, argv[4]);
  double entry_timeout = arg_num(env, argv[8]), attr_timeout = arg_num(env, argv[9]);
  uint32_t count = 0;
  napi_get_array_length(env, argv[5], &count);
  char *buf = malloc(size ? size : 1);
  size_t used = 0;
  int added = 0;
  char name[1024];
  off_t base = off > 2 ? off - 2 : 0; // the folder's index of names[0]
  for (off_t i = off; i < base + (off_t)count + 2; i++) {
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    const char *n;
    if (i < 2) {
      n = i == 0 ? "." : "..";
      e.attr.st_ino = i == 0 ? dir : up;
      e.attr.st_mode = S_IFDIR;
    } else {
      napi_value v, ino, st;
      napi_get_element(env, argv[5], (uint32_t)(i - 2 - base), &v);
      napi_get_element(env, argv[6], (uint32_t)(i - 2 - base), &ino);
      napi_get_element(env, argv[7], (uint32_t)(i - 2 - base), &st);
      size_t len = 0;
      napi_get_value_string_utf8(env, v, name, sizeof name, &len);
      n = name;
      e.ino = (fuse_ino_t)arg_num(env, ino);
      to_stat(env, st, e.ino, &e.attr);
      e.entry_timeout = entry_timeout;
      e.attr_timeout = attr_timeout;
    }
    size_t need = fuse_add_direntry_plus(c->req, buf + used, size - used, n, &e, i + 1);
    if (need > size - used) break;
    used += need;
    if (i >= 2) added++;
  }
  fuse_reply_buf(c->req, buf, used);
  free(buf);
  answered(c);
  return num(env, added);
}

// ------------------------------------------------------------------------ notifications (JavaScript)

// notifyInode(ino, offset, length): the kernel drops what it keeps of node `ino` (attributes; pages
// from offset for length, 0 = all; offset -1: attributes only; a folder: its kept listing).
static napi_value notify_inode(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (!session) return NULL;
  note_t *n = calloc(1, sizeof *n);
  n->ino = (fuse_ino_t)arg_num(env, argv[0]);
  n->off = (int64_t)arg_num(env, argv[1]);
  n->len = (int64_t)arg_num(env, argv[2]);
  queue_note(n);
  return NULL;
}

// notifyEntry(folderIno, name): the kernel forgets that the folder has (or lacks) that name.
static napi_value notify_entry(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (!session) return NULL;
  note_t *n = calloc(1, sizeof *n);
  n->entry = 1;
  n->ino = (fuse_ino_t)arg_num(env, argv[0]);
  char name[1024];
  size_t len = 0;
  napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len);
  n->name = strdup(name);
  queue_note(n);
  return NULL;
}

// dropEntryNotes(folderIno, name): name invalidations of that folder's name still waiting are
// dropped. A rename onto the name answered them: computed before it (the name's old item gone),
// sent after it they would drop the entry the kernel just moved there (a new node, a new inode).
static napi_value drop_entry_notes(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  fuse_ino_t ino = (fuse_ino_t)arg_num(env, argv[0]);
  char name[1024];
  size_t len = 0;
  napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len);
  pthread_mutex_lock(&notes_lock);
  note_t *prev = NULL, *n = notes_head;
  while (n) {
    note_t *next = n->next;
    if (n->entry && n->ino == ino && strcmp(n->name, name) == 0) {
      if (prev) prev->next = next;
      else notes_head = next;
      if (notes_tail == n) notes_tail = prev;
      free(n->name);
      free(n);
    } else prev = n;
    n = next;
  }
  pthread_mutex_unlock(&notes_lock);
  return NULL;
}

// ------------------------------------------------------------------------ mount, loop, unmount

// How long the loop keeps reading after a request answered here before it sleeps in poll(2)
// (TXTFS_FUSE_SPIN_US; 0: never). A program that opens, stats and closes notes one after the other
// (grep -r, find -exec, an editor's checks) sends its next request within microseconds; a thread
// asleep in read(2) takes a wakeup of its CPU to see it, which on a virtual machine whose idle CPUs
// halt costs tens of microseconds each, more than the open itself (docs/benchmarks.md). Not while
// JavaScript has a request: the answer is its, and the CPU is better left to it.
static uint64_t spin_ns = 50000;

static void *loop_main(void *arg) {
  (void)arg;
  const char *env = getenv("TXTFS_FUSE_SPIN_US");
  if (env) spin_ns = (uint64_t)atoll(env) * 1000;
  int fd = fuse_session_fd(session);
  if (spin_ns) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  struct fuse_buf buf = {.mem = NULL};
  uint64_t idle_since = 0;
  while (!fuse_session_exited(session)) {
    int res = fuse_session_receive_buf(session, &buf);
    if (res == -EAGAIN) {
      uint64_t now = monotonic_ns();
      if (!idle_since) idle_since = now;
      if (now - idle_since < spin_ns && atomic_load(&with_js) == 0) {
        sched_yield(); // runnable threads of this CPU go first
        continue;
      }
      struct pollfd p = {.fd = fd, .events = POLLIN};
      poll(&p, 1, -1);
      idle_since = 0;
      continue;
    }
    if (res == -EINTR) continue;
    if (res <= 0) break;
    idle_since = 0;
    fuse_session_process_buf(session, &buf);
  }
  free(buf.mem);
  fuse_session_reset(session);
  atomic_store(&stopping, 1);
  napi_call_threadsafe_function(loop_end_fn, NULL, napi_tsfn_nonblocking);
  return NULL;
}

static void call_loop_end(napi_env env, napi_value fn, void *context, void *data) {
  (void)context, (void)data;
  if (!env) return;
  napi_value global;
  napi_get_global(env, &global);
  napi_call_function(env, global, fn, 0, NULL, NULL);
}

// mount(mountpoint, options: string[] (libfuse's "-o" arguments), dispatch, onLoopEnd)
static napi_value mount(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (session) {
    napi_throw_error(env, NULL, "txtfs-fuse3: already mounted");
    return NULL;
  }
  char mountpoint[4096];
  size_t len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[0], mountpoint, sizeof mountpoint, &len));
  uint32_t nopts = 0;
  CHECK(napi_get_array_length(env, argv[1], &nopts));
  char **fargv = calloc(nopts + 2, sizeof *fargv);
  int fargc = 0;
  fargv[fargc++] = strdup("txtfs");
  for (uint32_t i = 0; i < nopts; i++) {
    napi_value v;
    char opt[4096];
    napi_get_element(env, argv[1], i, &v);
    napi_get_value_string_utf8(env, v, opt, sizeof opt, &len);
    fargv[fargc++] = strdup(opt);
  }
  struct fuse_args args = FUSE_ARGS_INIT(fargc, fargv);
  session = fuse_session_new(&args, &ops, sizeof ops, NULL);
  fuse_opt_free_args(&args);
  for (int i = 0; i < fargc; i++) free(fargv[i]);
  free(fargv);
  if (!session) {
    napi_throw_error(env, NULL, "bad FUSE options (libfuse3 refused them)");
    return NULL;
  }
  if (fuse_session_mount(session, mountpoint) != 0) {
    fuse_session_destroy(session);
    session = NULL;
    napi_throw_error(env, NULL, "the kernel refused the mount (see the message above)");
    return NULL;
  }
  napi_value name;
  napi_create_string_utf8(env, "txtfs-fuse3", NAPI_AUTO_LENGTH, &name);
  CHECK(napi_create_threadsafe_function(env, argv[2], NULL, name, 0, 1, NULL, NULL, NULL, call_js, &dispatch_fn));
  CHECK(napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, NULL, NULL, NULL, call_loop_end, &loop_end_fn));
  napi_unref_threadsafe_function(env, loop_end_fn);
  atomic_store(&stopping, 0);
  notes_quit = 0;
  pthread_create(&notes_thread, NULL, notes_loop, NULL);
  notes_started = 1;
  pthread_create(&loop_thread, NULL, loop_main, NULL);
  loop_started = 1;
  return NULL;
}

// close(): once the loop ended (the mount was unmounted: `umount`, `fusermount3 -u`), frees the
// session; requests still unanswered were ended by the kernel with the connection.
static napi_value close_session(napi_env env, napi_callback_info info) {
  (void)info;
  if (!session) return NULL;
  if (loop_started) pthread_join(loop_thread, NULL), loop_started = 0;
  if (notes_started) {
    pthread_mutex_lock(&notes_lock);
    notes_quit = 1;
    pthread_cond_signal(&notes_cond);
    pthread_mutex_unlock(&notes_lock);
    pthread_join(notes_thread, NULL);
    notes_started = 0;
  }
  // The kernel ended the connection: fuse_session_unmount then only closes the fd and frees the
  // mountpoint libfuse copied, which destroy alone leaves behind (LeakSanitizer: one per mount).
  struct pollfd gone = {.fd = fuse_session_fd(session), .events = 0};
  if (poll(&gone, 1, 0) == 1 && (gone.revents & POLLERR)) fuse_session_unmount(session);
  fuse_session_destroy(session);
  session = NULL;
  opens_reset();
  names_reset();
  held_reset();
  flushes_reset();
  napi_release_threadsafe_function(dispatch_fn, napi_tsfn_abort);
  napi_release_threadsafe_function(loop_end_fn, napi_tsfn_abort);
  return NULL;
}

// exitNow(code): ends the process at once, for a daemon whose stop is done (src/fuse/index.ts, Mounted.exit, explains).
static napi_value exit_now(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
#ifdef TXTFS_LEAK_CHECK
  __lsan_do_leak_check(); // the sanitizer build (scripts/sanitize): _exit skips the check at exit
#endif
  _exit((int)arg_num(env, argv[0]));
}

// inFlight(): requests handed to JavaScript and not answered yet (tests).
static napi_value in_flight_total(napi_env env, napi_callback_info info) {
  (void)info;
  long total = 0;
  for (int i = 0; i < BUCKETS; i++) total += atomic_load(&in_flight[i]);
  return num(env, (double)total);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"mount", NULL, mount, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_session, NULL, NULL, NULL, napi_default, NULL},
      {"exitNow", NULL, exit_now, NULL, NULL, NULL, napi_default, NULL},
      {"inFlight", NULL, in_flight_total, NULL, NULL, NULL, napi_default, NULL},
      {"replyErr", NULL, reply_err, NULL, NULL, NULL, napi_default, NULL},
      {"replyEntry", NULL, reply_entry, NULL, NULL, NULL, napi_default, NULL},
      {"replyCreate", NULL, reply_create, NULL, NULL, NULL, napi_default, NULL},
      {"replyAttr", NULL, reply_attr, NULL, NULL, NULL, napi_default, NULL},
      {"replyOpen", NULL, reply_open, NULL, NULL, NULL, napi_default, NULL},
      {"replyBuf", NULL, reply_buf, NULL, NULL, NULL, napi_default, NULL},
      {"replyWrite", NULL, reply_write, NULL, NULL, NULL, napi_default, NULL},
      {"replyReadlink", NULL, reply_readlink, NULL, NULL, NULL, napi_default, NULL},
      {"replyXattrSize", NULL, reply_xattr_size, NULL, NULL, NULL, napi_default, NULL},
      {"replyStatfs", NULL, reply_statfs, NULL, NULL, NULL, napi_default, NULL},
      {"replyDir", NULL, reply_dir, NULL, NULL, NULL, napi_default, NULL},
      {"notifyInode", NULL, notify_inode, NULL, NULL, NULL, napi_default, NULL},
      {"notifyEntry", NULL, notify_entry, NULL, NULL, NULL, napi_default, NULL},
      {"dropEntryNotes", NULL, drop_entry_notes, NULL, NULL, NULL, napi_default, NULL},
      {"openable", NULL, opens_openable, NULL, NULL, NULL, napi_default, NULL},
      {"openableNone", NULL, opens_openable_none, NULL, NULL, NULL, napi_default, NULL},
      {"opened", NULL, opens_opened, NULL, NULL, NULL, napi_default, NULL},
      {"nativeOpens", NULL, opens_count, NULL, NULL, NULL, napi_default, NULL},
      {"watchReleases", NULL, opens_watch, NULL, NULL, NULL, napi_default, NULL},
      {"forgetNode", NULL, opens_forget, NULL, NULL, NULL, napi_default, NULL},
      {"holdWrites", NULL, held_hold_writes, NULL, NULL, NULL, napi_default, NULL},
      {"holdable", NULL, held_holdable, NULL, NULL, NULL, napi_default, NULL},
      {"takeHeld", NULL, held_take_js, NULL, NULL, NULL, napi_default, NULL},
      {"putNames", NULL, names_put, NULL, NULL, NULL, napi_default, NULL},
      {"addName", NULL, names_add, NULL, NULL, NULL, napi_default, NULL},
      {"dropNames", NULL, names_drop, NULL, NULL, NULL, napi_default, NULL},
      {"dropAllNames", NULL, names_drop_all, NULL, NULL, NULL, napi_default, NULL},
      {"unlistedSuffix", NULL, names_suffix, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof *props, props);
  return exports;
}
