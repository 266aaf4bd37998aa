// What libfuse3's low-level API would buy the mount (issue 19, "toward the local directory"): a
// read-only filesystem serving a copy, held in memory, of a local directory tree, in three modes,
// every request answered at once from memory.
//
//   today   what txtfs's patched fuse-native answers in C now: the kernel keeps names and
//           attributes for 1 s; every opendir/readdir/releasedir and open/flush/release crosses
//           into the daemon; no READDIRPLUS (libfuse2's high-level API has none).
//   dirs    what libfuse3 allows and libfuse2's high-level API does not: opendir answered ENOSYS
//           (the kernel then sends no opendir/releasedir again and keeps each folder's listing in
//           its page cache), listings with attributes (READDIRPLUS), names, attributes and absent
//           names kept for an hour, and a change made behind the kernel's back told to it
//           (notify_inval_*) the moment it happens, so nothing stale is served. Files are still
//           opened, flushed and released: a mount that writes must see every close.
//   cached  dirs, and open and flush answered ENOSYS too (no request per file read: what only a
//           read-only mount could do).
//
// Usage: probe SRC MOUNTPOINT today|dirs|cached [FUSE options...]. SIGUSR1: append a line to a file
// of the root and add a file `probe-new-N.md` in the root, both "elsewhere" (told to the kernel in
// dirs and cached), and print the time of the change. Not part of txtfs: a measurement
// (scripts/bench/fuse3-probe.ts builds and runs it).
#define FUSE_USE_VERSION 34
#include <dirent.h>
#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct node {
  char *name;
  fuse_ino_t parent;
  int is_dir;
  char *data;
  size_t size;
  struct timespec mtime;
  fuse_ino_t *kids;
  size_t nkids, capkids;
};

static struct node *nodes; // index = inode number; 1 = root
static size_t nnodes, capnodes;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static int cached;     // names, attributes and listings kept by the kernel, told of changes
static int files_open; // open/flush/release still come
static double timeout;
static struct fuse_session *session;

static fuse_ino_t add_node(const char *name, fuse_ino_t parent, int is_dir) {
  if (nnodes == capnodes) {
    capnodes = capnodes ? capnodes * 2 : 1024;
    nodes = realloc(nodes, capnodes * sizeof *nodes);
  }
  fuse_ino_t ino = nnodes++;
  memset(&nodes[ino], 0, sizeof nodes[ino]);
  nodes[ino].name = strdup(name);
  nodes[ino].parent = parent;
  nodes[ino].is_dir = is_dir;
  clock_gettime(CLOCK_REALTIME, &nodes[ino].mtime);
  if (parent) {
    struct node *p = &nodes[parent];
    if (p->nkids == p->capkids) {
      p->capkids = p->capkids ? p->capkids * 2 : 8;
      p->kids = realloc(p->kids, p->capkids * sizeof *p->kids);
    }
    p->kids[p->nkids++] = ino;
  }
  return ino;
}

static void load(const char *path, fuse_ino_t dir) {
  DIR *d = opendir(path);
  if (!d) { perror(path); exit(1); }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    struct stat st;
    if (lstat(child, &st)) continue;
    if (S_ISDIR(st.st_mode)) {
      load(child, add_node(e->d_name, dir, 1));
    } else if (S_ISREG(st.st_mode)) {
      fuse_ino_t ino = add_node(e->d_name, dir, 0);
      FILE *f = fopen(child, "rb");
      nodes[ino].data = malloc(st.st_size + 1);
      nodes[ino].size = fread(nodes[ino].data, 1, st.st_size, f);
      fclose(f);
    }
  }
  closedir(d);
}

static void fill_stat(fuse_ino_t ino, struct stat *st) {
  memset(st, 0, sizeof *st);
  struct node *n = &nodes[ino];
  st->st_ino = ino;
  st->st_mode = n->is_dir ? S_IFDIR | 0755 : S_IFREG | 0644;
  st->st_nlink = n->is_dir ? 2 : 1;
  st->st_size = n->is_dir ? 4096 : (off_t)n->size;
  st->st_blocks = (st->st_size + 511) / 512;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_mtim = st->st_ctim = st->st_atim = n->mtime;
}

static fuse_ino_t find_kid(fuse_ino_t parent, const char *name) {
  struct node *p = &nodes[parent];
  for (size_t i = 0; i < p->nkids; i++)
    if (!strcmp(nodes[p->kids[i]].name, name)) return p->kids[i];
  return 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct fuse_entry_param e = {0};
  pthread_rwlock_rdlock(&lock);
  fuse_ino_t ino = parent < nnodes && nodes[parent].is_dir ? find_kid(parent, name) : 0;
  e.attr_timeout = e.entry_timeout = timeout;
  if (ino) {
    e.ino = ino;
    fill_stat(ino, &e.attr);
  }
  pthread_rwlock_unlock(&lock);
  // ino 0 with a timeout: the kernel keeps the name's absence too (told when it appears).
  if (!ino && !cached) fuse_reply_err(req, ENOENT);
  else fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  struct stat st;
  pthread_rwlock_rdlock(&lock);
  if (ino >= nnodes) {
    pthread_rwlock_unlock(&lock);
    fuse_reply_err(req, ENOENT);
    return;
  }
  fill_stat(ino, &st);
  pthread_rwlock_unlock(&lock);
  fuse_reply_attr(req, &st, timeout);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  if (cached) fuse_reply_err(req, ENOSYS);
  else fuse_reply_open(req, fi);
}

static void op_readdir_any(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus) {
  char *buf = malloc(size);
  size_t used = 0;
  pthread_rwlock_rdlock(&lock);
  struct node *d = &nodes[ino];
  // Offsets: 1 = ".", 2 = "..", 3 + i = the i-th child.
  for (off_t i = off; i < (off_t)d->nkids + 2; i++) {
    const char *name = i == 0 ? "." : i == 1 ? ".." : nodes[d->kids[i - 2]].name;
    fuse_ino_t child = i == 0 ? ino : i == 1 ? (d->parent ? d->parent : ino) : d->kids[i - 2];
    size_t len;
    if (plus) {
      struct fuse_entry_param e = {0};
      if (i >= 2) {
        e.ino = child;
        e.attr_timeout = e.entry_timeout = timeout;
        fill_stat(child, &e.attr);
      } else {
        e.attr.st_ino = child;
        e.attr.st_mode = S_IFDIR;
      }
      len = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, i + 1);
    } else {
      struct stat st = {0};
      st.st_ino = child;
      st.st_mode = i < 2 || nodes[child].is_dir ? S_IFDIR : S_IFREG;
      len = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
    }
    if (len > size - used) break;
    used += len;
  }
  pthread_rwlock_unlock(&lock);
  fuse_reply_buf(req, buf, used);
  free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  op_readdir_any(req, ino, size, off, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  op_readdir_any(req, ino, size, off, 1);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  fuse_reply_err(req, 0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  if (!files_open) {
    fuse_reply_err(req, ENOSYS);
    return;
  }
  fi->keep_cache = 1;
  fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  pthread_rwlock_rdlock(&lock);
  struct node *n = &nodes[ino];
  size_t from = (size_t)off < n->size ? (size_t)off : n->size;
  size_t len = n->size - from < size ? n->size - from : size;
  char *copy = malloc(len ? len : 1);
  memcpy(copy, n->data + from, len);
  pthread_rwlock_unlock(&lock);
  fuse_reply_buf(req, copy, len);
  free(copy);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  fuse_reply_err(req, files_open ? 0 : ENOSYS);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino;
  (void)fi;
  fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino) {
  (void)ino;
  struct statvfs st = {.f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255};
  fuse_reply_statfs(req, &st);
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  // Like the libfuse2 high-level API (no READDIRPLUS) in `today`; listings carry attributes otherwise.
  if (!cached) conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
  else conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

// A change made elsewhere, as the feed would bring it: applied, then told to the kernel.
static volatile sig_atomic_t change_asked;
static void on_usr1(int sig) {
  (void)sig;
  change_asked = 1;
}

static void *changer(void *arg) {
  (void)arg;
  int made = 0;
  for (;;) {
    usleep(1000);
    if (!change_asked) continue;
    change_asked = 0;
    fuse_ino_t file = 0;
    for (size_t i = 0; i < nodes[1].nkids && !file; i++)
      if (!nodes[nodes[1].kids[i]].is_dir) file = nodes[1].kids[i];
    if (!file) continue; // the root holds no file to change
    char name[64];
    snprintf(name, sizeof name, "probe-new-%d.md", ++made);
    pthread_rwlock_wrlock(&lock);
    const char *line = "changed elsewhere\n";
    struct node *n = &nodes[file];
    n->data = realloc(n->data, n->size + strlen(line));
    memcpy(n->data + n->size, line, strlen(line));
    n->size += strlen(line);
    clock_gettime(CLOCK_REALTIME, &n->mtime);
    fuse_ino_t added = add_node(name, 1, 0);
    nodes[added].data = strdup("new\n");
    nodes[added].size = 4;
    clock_gettime(CLOCK_REALTIME, &nodes[1].mtime);
    pthread_rwlock_unlock(&lock);
    struct timespec at; // the change is made: what a reader sees from here on is timed
    clock_gettime(CLOCK_REALTIME, &at);
    if (cached) {
      fuse_lowlevel_notify_inval_inode(session, file, 0, 0); // attributes and pages
      fuse_lowlevel_notify_inval_entry(session, 1, name, strlen(name)); // the kept absence
      fuse_lowlevel_notify_inval_inode(session, 1, 0, 0); // the root's kept listing
    }
    fprintf(stderr, "changed %s added %s at %lld.%09ld\n", nodes[file].name, name, (long long)at.tv_sec, at.tv_nsec);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4 || (strcmp(argv[3], "today") && strcmp(argv[3], "dirs") && strcmp(argv[3], "cached"))) {
    fprintf(stderr, "usage: %s SRC MOUNTPOINT today|dirs|cached [-o opts]\n", argv[0]);
    return 2;
  }
  cached = strcmp(argv[3], "today") != 0;
  files_open = strcmp(argv[3], "cached") != 0;
  timeout = cached ? 3600.0 : 1.0;
  add_node("", 0, 1); // inode 0: unused
  add_node("", 0, 1); // inode 1: the root
  nodes[1].parent = 0;
  load(argv[1], 1);
  char *fargv[16] = {argv[0]};
  int fargc = 1;
  for (int i = 4; i < argc && fargc < 15; i++) fargv[fargc++] = argv[i];
  struct fuse_args args = FUSE_ARGS_INIT(fargc, fargv);
  struct fuse_lowlevel_ops ops = {
      .init = op_init,
      .lookup = op_lookup,
      .getattr = op_getattr,
      .opendir = op_opendir,
      .readdir = op_readdir,
      .readdirplus = op_readdirplus,
      .releasedir = op_releasedir,
      .open = op_open,
      .read = op_read,
      .flush = op_flush,
      .release = op_release,
      .statfs = op_statfs,
  };
  session = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (!session || fuse_set_signal_handlers(session) || fuse_session_mount(session, argv[2])) return 1;
  signal(SIGUSR1, on_usr1);
  pthread_t t;
  pthread_create(&t, NULL, changer, NULL);
  fprintf(stderr, "mounted %s (%s): %zu inodes\n", argv[2], argv[3], nnodes - 1);
  struct fuse_loop_config cfg = {.clone_fd = 0, .max_idle_threads = 10};
  int rc = fuse_session_loop_mt(session, &cfg);
  fuse_session_unmount(session);
  fuse_remove_signal_handlers(session);
  fuse_session_destroy(session);
  return rc ? 1 : 0;
}
