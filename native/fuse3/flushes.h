// Flushes of handles nothing was written through since their open or last flush (flushes.c).
// (Kept here only: src/fuse/kernelCache/index.ts maps every copy.)
#pragma once
#include <stdint.h>

void flushes_opened(uint64_t fh);
void flushes_written(uint64_t fh);
void flushes_all_written(void);
// 1: clean, answered here; 0: JavaScript answers it, and `*writes` is what flushes_flushed compares.
int flushes_clean(uint64_t fh, uint64_t *writes);
void flushes_flushed(uint64_t fh, uint64_t writes);
void flushes_released(uint64_t fh);
void flushes_reset(void);
