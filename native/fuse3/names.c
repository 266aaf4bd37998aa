// Lookups of names a folder does not have, answered here without JavaScript. Editors and shells
// look up a name before they make it (vim: its swap file, `4913`, its backup; `echo x > new`; sed
// -i's temporary file; `mv`'s target): each was a round trip into JavaScript to hear ENOENT.
// JavaScript puts a folder's names here (src/fuse/kernelCache/folderNames.ts) when it lists the
// folder or answers such a lookup itself, as a set of name hashes by folder node, and adds every
// name that may come to exist in it before the change can be seen: its own operations' names
// before they are answered, the vfs's reports in the same turn as the change. So a set holds at least the folder's
// names, and a name not in it does not exist; a hash collision only sends a lookup to JavaScript.
// A change JavaScript cannot pin to names drops every set; a set older than a minute is not used
// (a backstop for a change nobody reported).
//
// The absence is answered with no entry timeout: the kernel keeps no negative entry, so a name that
// appears is found at the next lookup, with nothing to tell the kernel.
#include "names.h"
#include "js.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 16384
#define MAX_AGE_NS (60ull * 1000000000ull)

typedef struct folder {
  struct folder *next;
  fuse_ino_t ino;
  uint64_t made_ns;
  uint64_t *hashes; // open addressing, 0: empty
  size_t cap, count;
} folder_t;

static folder_t *table[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char suffix[256]; // names ending so resolve without being listed (sidecars)
static size_t suffix_len;

static unsigned slot(fuse_ino_t ino) { return (unsigned)((ino * 0x9E3779B97F4A7C15ull) >> 50); }

static uint64_t name_hash(const char *s, size_t n) {
  uint64_t h = 14695981039346656037ull; // FNV-1a
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h ? h : 1;
}

// Whether `s` is valid UTF-8 (no overlong forms, no surrogates): only such names reach JavaScript
// unchanged (it reads any other byte as U+FFFD, so the names it knows are not the one asked for).
static int utf8_valid(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
    else return 0;
    if (n - i <= k) return 0; // cut short
    for (size_t j = 1; j <= k; j++) {
      if ((s[i + j] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    i += k + 1;
  }
  return 1;
}

static folder_t *find_locked(fuse_ino_t ino) {
  for (folder_t *f = table[slot(ino)]; f; f = f->next)
    if (f->ino == ino) return f;
  return NULL;
}

static int has(const folder_t *f, uint64_t h) {
  if (f->cap == 0) return 0; // a folder with no names
  for (size_t i = h & (f->cap - 1);; i = (i + 1) & (f->cap - 1)) {
    if (f->hashes[i] == h) return 1;
    if (f->hashes[i] == 0) return 0;
  }
}

// 0 when out of memory: the set must then go (it would lack the name).
static int insert(folder_t *f, uint64_t h) {
  if (2 * (f->count + 1) > f->cap) {
    size_t cap = f->cap ? 2 * f->cap : 16;
    uint64_t *old = f->hashes, *grown = calloc(cap, sizeof *grown);
    if (!grown) return 0;
    size_t old_cap = f->cap;
    f->hashes = grown, f->cap = cap, f->count = 0;
    for (size_t i = 0; i < old_cap; i++)
      if (old[i]) insert(f, old[i]);
    free(old);
  }
  if (has(f, h)) return 1;
  size_t i = h & (f->cap - 1);
  while (f->hashes[i]) i = (i + 1) & (f->cap - 1);
  f->hashes[i] = h;
  f->count++;
  return 1;
}

static void drop_locked(fuse_ino_t ino) {
  for (folder_t **p = &table[slot(ino)]; *p; p = &(*p)->next) {
    folder_t *f = *p;
    if (f->ino != ino) continue;
    *p = f->next;
    free(f->hashes);
    free(f);
    return;
  }
}

int names_absent(fuse_ino_t parent, const char *name) {
  size_t n = strlen(name);
  if (!utf8_valid((const unsigned char *)name, n)) return 0;
  if (suffix_len && n >= suffix_len && memcmp(name + n - suffix_len, suffix, suffix_len) == 0) return 0;
  uint64_t h = name_hash(name, n);
  int absent = 0;
  pthread_mutex_lock(&lock);
  folder_t *f = find_locked(parent);
  if (f && monotonic_ns() - f->made_ns < MAX_AGE_NS) absent = !has(f, h);
  pthread_mutex_unlock(&lock);
  return absent;
}

void names_reset(void) {
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < SLOTS; i++) {
    for (folder_t *f = table[i], *next; f; f = next) next = f->next, free(f->hashes), free(f);
    table[i] = NULL;
  }
  pthread_mutex_unlock(&lock);
}

// ------------------------------------------------------------------------ JavaScript's side

// A name of at most NAME_MAX bytes as UTF-8 (longer ones never exist: nothing to add or put).
static int get_name(napi_env env, napi_value v, char *buf, size_t *len) {
  return napi_get_value_string_utf8(env, v, buf, 1024, len) == napi_ok && *len < 1023;
}

// putNames(folderIno, names): the folder's names, all of them (what lookups resolve in it).
napi_value names_put(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (js_args(env, info, argv, 2) < 2) return NULL;
  fuse_ino_t ino = (fuse_ino_t)js_double(env, argv[0]);
  uint32_t count = 0;
  napi_get_array_length(env, argv[1], &count);
  folder_t *f = calloc(1, sizeof *f);
  int ok = f != NULL;
  char name[1024];
  for (uint32_t i = 0; ok && i < count; i++) {
    napi_value v;
    size_t len = 0;
    napi_get_element(env, argv[1], i, &v);
    ok = get_name(env, v, name, &len) && insert(f, name_hash(name, len));
  }
  pthread_mutex_lock(&lock);
  drop_locked(ino);
  if (ok) {
    f->ino = ino;
    f->made_ns = monotonic_ns();
    f->next = table[slot(ino)];
    table[slot(ino)] = f;
  }
  pthread_mutex_unlock(&lock);
  if (!ok && f) free(f->hashes), free(f);
  return NULL;
}

// addName(folderIno, name): the name may exist in the folder from now on.
napi_value names_add(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (js_args(env, info, argv, 2) < 2) return NULL;
  fuse_ino_t ino = (fuse_ino_t)js_double(env, argv[0]);
  char name[1024];
  size_t len = 0;
  int named = get_name(env, argv[1], name, &len);
  pthread_mutex_lock(&lock);
  folder_t *f = find_locked(ino);
  if (f && !(named && insert(f, name_hash(name, len)))) drop_locked(ino);
  pthread_mutex_unlock(&lock);
  return NULL;
}

// dropNames(folderIno): lookups in the folder go to JavaScript until its names are put again.
napi_value names_drop(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (js_args(env, info, argv, 1) < 1) return NULL;
  fuse_ino_t ino = (fuse_ino_t)js_double(env, argv[0]);
  pthread_mutex_lock(&lock);
  drop_locked(ino);
  pthread_mutex_unlock(&lock);
  return NULL;
}

// dropAllNames(): every folder's.
napi_value names_drop_all(napi_env env, napi_callback_info info) {
  (void)env, (void)info;
  names_reset();
  return NULL;
}

// unlistedSuffix(suffix): names ending so resolve without being in their folder's names.
napi_value names_suffix(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (js_args(env, info, argv, 1) < 1) return NULL;
  pthread_mutex_lock(&lock);
  napi_get_value_string_utf8(env, argv[0], suffix, sizeof suffix, &suffix_len);
  pthread_mutex_unlock(&lock);
  return NULL;
}
