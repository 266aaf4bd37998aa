// Writes held here and handed to JavaScript together (held.c).
// JavaScript's side: src/fuse/kernelCache/heldWrites.ts (index.ts there maps every copy).
#pragma once
#define FUSE_USE_VERSION 34
#define NAPI_VERSION 8
#include <fuse_lowlevel.h>
#include <node_api.h>
#include <stdint.h>

// 1: the write was held (the caller answers it); 0: JavaScript answers it (after what is held).
int held_write(fuse_ino_t ino, uint64_t fh, const char *buf, size_t size, off_t off);
// What is held, if anything, given to `send` (its `data` to free) to go to JavaScript before the
// request that is about to.
void held_hand_over(void (*send)(fuse_ino_t ino, uint64_t fh, off_t off, char *data, size_t len));
// `fh` may hold its writes (open and create replies), or not (released).
void held_mark(uint64_t fh, int on);
void held_reset(void);

// JavaScript's side (src/fuse/binding.ts documents each).
napi_value held_hold_writes(napi_env env, napi_callback_info info);
napi_value held_holdable(napi_env env, napi_callback_info info);
napi_value held_take_js(napi_env env, napi_callback_info info);
