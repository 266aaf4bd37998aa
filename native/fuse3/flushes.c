// Flushes of handles nothing was written through since they were opened or last flushed, answered
// here. Shells flush every descriptor they close, and `echo x > note` closes one before it writes
// (after its dup2): that flush has nothing to save (Vfs.flush uploads only what was written, and a
// note made by create exists without it). A write, or a truncate through the handle (or by path:
// it may be any handle's), makes it unclean until JavaScript answered its next flush — if no write
// came meanwhile. Slots by handle number; a handle whose slot another one took is not tracked, so
// its flushes all go to JavaScript.
#include "flushes.h"
#include <pthread.h>

#define SLOTS 4096
#define NONE UINT64_MAX

typedef struct {
  uint64_t fh, writes;
  int clean;
} slot_t;

static slot_t slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ready;

static slot_t *slot_locked(uint64_t fh) {
  if (!ready) {
    for (unsigned i = 0; i < SLOTS; i++) slots[i].fh = NONE;
    ready = 1;
  }
  return &slots[fh % SLOTS];
}

void flushes_opened(uint64_t fh) {
  pthread_mutex_lock(&lock);
  slot_t *s = slot_locked(fh);
  s->fh = fh, s->writes = 0, s->clean = 1;
  pthread_mutex_unlock(&lock);
}

void flushes_written(uint64_t fh) {
  pthread_mutex_lock(&lock);
  slot_t *s = slot_locked(fh);
  if (s->fh == fh) s->writes++, s->clean = 0;
  pthread_mutex_unlock(&lock);
}

void flushes_all_written(void) {
  pthread_mutex_lock(&lock);
  slot_locked(0);
  for (unsigned i = 0; i < SLOTS; i++) slots[i].writes++, slots[i].clean = 0;
  pthread_mutex_unlock(&lock);
}

int flushes_clean(uint64_t fh, uint64_t *writes) {
  pthread_mutex_lock(&lock);
  slot_t *s = slot_locked(fh);
  int clean = s->fh == fh && s->clean;
  *writes = s->fh == fh ? s->writes : NONE;
  pthread_mutex_unlock(&lock);
  return clean;
}

void flushes_flushed(uint64_t fh, uint64_t writes) {
  pthread_mutex_lock(&lock);
  slot_t *s = slot_locked(fh);
  if (s->fh == fh && writes != NONE && s->writes == writes) s->clean = 1;
  pthread_mutex_unlock(&lock);
}

void flushes_released(uint64_t fh) {
  pthread_mutex_lock(&lock);
  slot_t *s = slot_locked(fh);
  if (s->fh == fh) s->fh = NONE, s->clean = 0;
  pthread_mutex_unlock(&lock);
}

void flushes_reset(void) {
  pthread_mutex_lock(&lock);
  ready = 0;
  pthread_mutex_unlock(&lock);
}
