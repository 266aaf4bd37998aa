// Read-only opens of notes answered here, without JavaScript: `grep -r` and `cat` cross into it only
// for the reads the kernel's page cache cannot answer. JavaScript marks a note openable when it
// gives the kernel the note's attributes and nothing is pending that a read by node would miss (no
// handle writes it, no append on its way), and unmarks it as soon as anything may change it (an open
// for writing, a truncate, a rename or removal, a change reported by the vfs: all synchronously,
// before the change can be seen). Handles made here carry NATIVE_FH: their reads go to JavaScript by
// node, their flush and release are answered here, but the last release of a note JavaScript
// watches (removed while open, kept under a hidden name) goes to JavaScript too.
//
// While a note is openable its attributes are answered here too (GETATTR): they are the ones
// JavaScript gave with the mark, and every change that could make them differ unmarks it first.
// After a read that reached JavaScript the kernel counts the note's atime as stale and asks on the
// next stat; without this a second `grep -r` crossed into JavaScript once per note for it.
//
// Each note also remembers the version (mtime and size) the kernel's pages were last read at, for
// JavaScript's opens and these alike: an open keeps the pages only if they are of the note's current
// version (libfuse's auto_cache). A remote edit arrives with notify_inval_inode as well.
#include "opens.h"
#include "js.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  struct entry *next;
  fuse_ino_t ino;
  uint64_t from_ns;               // opens are answered here from then on; UINT64_MAX: not
  double mtime, size;             // the note's version when JavaScript marked it
  double atime, ctime;            // and the rest of its attributes then, as the kernel is shown them
  uint32_t mode, uid, gid, nlink;
  float attr_timeout;             // how long the kernel may keep them (s)
  double paged_mtime, paged_size; // the version the kernel's pages are of (-1: none known)
  uint32_t opens;                 // handles made here, still open
  int watch;                      // JavaScript hears of the last release of those
} entry_t;

#define SLOTS 65536
static entry_t *table[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint next_fh;

static unsigned slot(fuse_ino_t ino) { return (unsigned)((ino * 0x9E3779B97F4A7C15ull) >> 48); }

static entry_t *find_locked(fuse_ino_t ino, int make) {
  entry_t **head = &table[slot(ino)];
  for (entry_t *e = *head; e; e = e->next)
    if (e->ino == ino) return e;
  if (!make) return NULL;
  entry_t *e = calloc(1, sizeof *e);
  if (!e) return NULL; // out of memory: opens go to JavaScript, pages are dropped at each
  e->ino = ino;
  e->from_ns = UINT64_MAX;
  e->paged_mtime = e->paged_size = -1;
  e->next = *head;
  *head = e;
  return e;
}

int opens_here(fuse_ino_t ino, struct fuse_file_info *fi) {
  // A truncating open changes the note (Linux truncates through a read-only one too).
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) return 0;
  int here = 0, keep = 0;
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked(ino, 0);
  if (e && e->from_ns <= monotonic_ns()) {
    here = 1;
    keep = e->paged_mtime == e->mtime && e->paged_size == e->size;
    e->paged_mtime = e->mtime;
    e->paged_size = e->size;
    e->opens++;
  }
  pthread_mutex_unlock(&lock);
  if (!here) return 0;
  fi->fh = NATIVE_FH | (atomic_fetch_add(&next_fh, 1) & (NATIVE_FH - 1));
  fi->direct_io = 0;
  fi->keep_cache = keep;
  fi->noflush = 1;
  return 1;
}

int opens_attr(fuse_ino_t ino, struct stat *st, double *timeout) {
  int here = 0;
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked(ino, 0);
  if (e && e->from_ns <= monotonic_ns()) {
    here = 1;
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
    st->st_mode = e->mode;
    st->st_size = (off_t)e->size;
    st->st_nlink = e->nlink;
    st->st_uid = e->uid;
    st->st_gid = e->gid;
    st->st_blksize = 4096;
    st->st_blocks = (st->st_size + 511) / 512;
    st->st_mtim = ms_to_timespec(e->mtime);
    st->st_atim = ms_to_timespec(e->atime);
    st->st_ctim = ms_to_timespec(e->ctime);
    *timeout = e->attr_timeout;
  }
  pthread_mutex_unlock(&lock);
  return here;
}

int opens_released_here(fuse_ino_t ino) {
  int tell = 0;
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked(ino, 0);
  if (e) {
    if (e->opens) e->opens--;
    tell = e->watch && e->opens == 0;
  }
  pthread_mutex_unlock(&lock);
  return !tell;
}

void opens_reset(void) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < SLOTS; i++) {
    for (entry_t *e = table[i], *next; e; e = next) next = e->next, free(e);
    table[i] = NULL;
  }
  pthread_mutex_unlock(&lock);
}

// ------------------------------------------------------------------------ JavaScript's side

// openable(ino, afterMs, attrs): read-only opens and stats of the note are answered here once
// afterMs have passed (the kernel may hold its old size until then); afterMs < 0: not any more.
// attrs (a Float64Array): mtime, size, mode, atime, ctime, nlink, uid, gid (as shown to the
// kernel; times in ms) and how long the kernel may keep them (s).
enum { A_MTIME, A_SIZE, A_MODE, A_ATIME, A_CTIME, A_NLINK, A_UID, A_GID, A_TIMEOUT, A_COUNT };

napi_value opens_openable(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = js_args(env, info, argv, 3);
  if (argc < 2) return NULL;
  fuse_ino_t ino = (fuse_ino_t)js_double(env, argv[0]);
  double after = js_double(env, argv[1]);
  const double *a = NULL;
  if (after >= 0) {
    napi_typedarray_type type;
    size_t length = 0;
    void *data = NULL;
    if (argc < 3 || napi_get_typedarray_info(env, argv[2], &type, &length, &data, NULL, NULL) != napi_ok ||
        type != napi_float64_array || length < A_COUNT) {
      napi_throw_type_error(env, NULL, "openable: attrs must be a Float64Array of 9");
      return NULL;
    }
    a = data;
  }
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked(ino, a != NULL);
  if (e && !a) e->from_ns = UINT64_MAX;
  else if (e) {
    e->from_ns = monotonic_ns() + (uint64_t)(after * 1e6);
    e->mtime = a[A_MTIME];
    e->size = a[A_SIZE];
    e->mode = (uint32_t)a[A_MODE];
    e->atime = a[A_ATIME];
    e->ctime = a[A_CTIME];
    e->nlink = (uint32_t)a[A_NLINK];
    e->uid = (uint32_t)a[A_UID];
    e->gid = (uint32_t)a[A_GID];
    e->attr_timeout = (float)a[A_TIMEOUT];
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

// openableNone(): no note is opened here until marked again (a change the vfs cannot pin to one).
napi_value opens_openable_none(napi_env env, napi_callback_info info) {
  (void)env, (void)info;
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < SLOTS; i++)
    for (entry_t *e = table[i]; e; e = e->next) e->from_ns = UINT64_MAX;
  pthread_mutex_unlock(&lock);
  return NULL;
}

// opened(ino, mtime, size) -> keep: JavaScript opens the note (not with direct I/O): whether the
// kernel's pages are of that version and may be kept; they are from now on.
napi_value opens_opened(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (js_args(env, info, argv, 3) < 3) return NULL;
  double mtime = js_double(env, argv[1]), size = js_double(env, argv[2]);
  int keep = 0;
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked((fuse_ino_t)js_double(env, argv[0]), 1);
  if (e) {
    keep = e->paged_mtime == mtime && e->paged_size == size;
    e->paged_mtime = mtime;
    e->paged_size = size;
  }
  pthread_mutex_unlock(&lock);
  napi_value out;
  napi_get_boolean(env, keep, &out);
  return out;
}

// nativeOpens(ino): handles of the note made here and still open.
napi_value opens_count(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (js_args(env, info, argv, 1) < 1) return NULL;
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked((fuse_ino_t)js_double(env, argv[0]), 0);
  uint32_t n = e ? e->opens : 0;
  pthread_mutex_unlock(&lock);
  return js_number(env, n);
}

// watchReleases(ino, on): the last release of a handle made here goes to JavaScript (RELEASE with
// a NATIVE_FH handle).
napi_value opens_watch(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (js_args(env, info, argv, 2) < 2) return NULL;
  bool on = false;
  napi_get_value_bool(env, argv[1], &on);
  pthread_mutex_lock(&lock);
  entry_t *e = find_locked((fuse_ino_t)js_double(env, argv[0]), on);
  if (e) e->watch = on;
  pthread_mutex_unlock(&lock);
  return NULL;
}

// forgetNode(ino): the kernel forgot the node (nothing of it is open): what is kept of it goes.
napi_value opens_forget(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (js_args(env, info, argv, 1) < 1) return NULL;
  fuse_ino_t ino = (fuse_ino_t)js_double(env, argv[0]);
  pthread_mutex_lock(&lock);
  for (entry_t **p = &table[slot(ino)]; *p; p = &(*p)->next) {
    entry_t *e = *p;
    if (e->ino != ino) continue;
    if (e->opens == 0) *p = e->next, free(e);
    break;
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}
