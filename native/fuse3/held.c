// Writes held here. A shell's `printf ... > new` writes a note in several pieces, each a round trip
// into JavaScript. A write through a handle JavaScript said cannot fail (KernelView.writesCannotFail: a
// note made or emptied through that open, or an O_APPEND one of a known size well below the
// largest) is answered here when it continues the bytes held, and the held bytes go to JavaScript
// as one write before the next request does (txtfs_fuse3.c's hand_over: one thread reads every
// request and JavaScript takes them in order, so a read, a stat, a rename, the handle's flush or
// another handle's write all come after them; JavaScript applies them before it starts any).
// JavaScript refuses such a write only for the unforeseen, and then says so at the handle's next
// flush or fsync, as a local disk's delayed write would. A kill -9 loses held bytes as it loses
// what JavaScript holds of an open note not flushed yet; a daemon that stops takes them first.
#include "held.h"
#include "js.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t max_bytes;   // the most bytes held at once (0: nothing is held)
static uint64_t limit;     // a held write may not end past this offset (the largest note)
static uint64_t held_fh;
static fuse_ino_t held_ino;
static off_t held_off;
static char *held_buf;
static size_t held_len, held_cap;

// Handles whose writes may be held: JavaScript's handle numbers, a small set.
#define SLOTS 1024
typedef struct mark {
  struct mark *next;
  uint64_t fh;
} mark_t;
static mark_t *marks[SLOTS];

static mark_t **find_locked(uint64_t fh) {
  mark_t **p = &marks[fh % SLOTS];
  while (*p && (*p)->fh != fh) p = &(*p)->next;
  return p;
}

void held_mark(uint64_t fh, int on) {
  pthread_mutex_lock(&lock);
  mark_t **p = find_locked(fh);
  if (on && !*p) {
    mark_t *m = calloc(1, sizeof *m);
    if (m) m->fh = fh, *p = m;
  } else if (!on && *p) {
    mark_t *m = *p;
    *p = m->next;
    free(m);
  }
  pthread_mutex_unlock(&lock);
}

int held_write(fuse_ino_t ino, uint64_t fh, const char *buf, size_t size, off_t off) {
  int held = 0;
  pthread_mutex_lock(&lock);
  if (max_bytes && size <= max_bytes && (uint64_t)off + size <= limit && *find_locked(fh) &&
      (held_len == 0 || (held_fh == fh && off == held_off + (off_t)held_len && held_len + size <= max_bytes))) {
    if (held_len + size > held_cap) {
      size_t cap = held_cap ? held_cap : 4096;
      while (cap < held_len + size) cap *= 2;
      char *grown = realloc(held_buf, cap);
      if (grown) held_buf = grown, held_cap = cap;
    }
    if (held_len + size <= held_cap) {
      if (held_len == 0) held_fh = fh, held_ino = ino, held_off = off;
      memcpy(held_buf + held_len, buf, size);
      held_len += size;
      held = 1;
    }
  }
  pthread_mutex_unlock(&lock);
  return held;
}

static int take_locked(fuse_ino_t *ino, uint64_t *fh, off_t *off, char **data, size_t *len) {
  if (!held_len) return 0;
  *ino = held_ino, *fh = held_fh, *off = held_off, *data = held_buf, *len = held_len;
  held_buf = NULL, held_len = held_cap = 0;
  return 1;
}

void held_hand_over(void (*send)(fuse_ino_t ino, uint64_t fh, off_t off, char *data, size_t len)) {
  fuse_ino_t ino;
  uint64_t fh;
  off_t off;
  char *data;
  size_t len;
  // Sent under the lock: once takeHeld had it, whatever was taken before is in JavaScript's queue.
  pthread_mutex_lock(&lock);
  if (take_locked(&ino, &fh, &off, &data, &len)) send(ino, fh, off, data, len);
  pthread_mutex_unlock(&lock);
}

void held_reset(void) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < SLOTS; i++) {
    for (mark_t *m = marks[i], *next; m; m = next) next = m->next, free(m);
    marks[i] = NULL;
  }
  free(held_buf);
  held_buf = NULL, held_len = held_cap = 0;
  pthread_mutex_unlock(&lock);
}

// ------------------------------------------------------------------------ JavaScript's side

// holdWrites(maxBytes, limit): writes are held from now on, up to maxBytes at once, none ending
// past limit; maxBytes 0: none from now on (what is held stays, for takeHeld).
napi_value held_hold_writes(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (js_args(env, info, argv, 2) < 2) return NULL;
  pthread_mutex_lock(&lock);
  max_bytes = (size_t)js_double(env, argv[0]);
  limit = (uint64_t)js_double(env, argv[1]);
  pthread_mutex_unlock(&lock);
  return NULL;
}

// holdable(fh, on): the handle's writes may be held (it was emptied by a truncate through it).
napi_value held_holdable(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (js_args(env, info, argv, 2) < 2) return NULL;
  bool on = false;
  napi_get_value_bool(env, argv[1], &on);
  held_mark((uint64_t)js_double(env, argv[0]), on);
  return NULL;
}

// takeHeld() -> [fh, offset, bytes] | undefined: what is held, now JavaScript's (a daemon stopping).
napi_value held_take_js(napi_env env, napi_callback_info info) {
  (void)info;
  fuse_ino_t ino;
  uint64_t fh;
  off_t off;
  char *data;
  size_t len;
  napi_value out;
  pthread_mutex_lock(&lock);
  int taken = take_locked(&ino, &fh, &off, &data, &len);
  pthread_mutex_unlock(&lock);
  if (!taken) {
    napi_get_undefined(env, &out);
    return out;
  }
  napi_value buf, v;
  void *raw;
  napi_create_buffer_copy(env, len, data, &raw, &buf);
  free(data);
  napi_create_array_with_length(env, 3, &out);
  napi_create_double(env, (double)fh, &v);
  napi_set_element(env, out, 0, v);
  napi_create_double(env, (double)off, &v);
  napi_set_element(env, out, 1, v);
  napi_set_element(env, out, 2, buf);
  return out;
}
