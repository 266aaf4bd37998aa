// Read-only opens of notes answered here, without JavaScript (opens.c).
// JavaScript's side: src/fuse/kernelCache/nativeOpens.ts (index.ts there maps every copy).
#pragma once
#define FUSE_USE_VERSION 34
#define NAPI_VERSION 8
#include <fuse_lowlevel.h>
#include <node_api.h>
#include <stdint.h>

#include "ops.h" // NATIVE_FH: handles of opens answered here carry it

static inline int native_fh(uint64_t fh) { return (fh & NATIVE_FH) != 0 && (fh >> 32) == 0; }

// 1: the open was answered here (`fi` filled; the caller replies); 0: JavaScript answers it.
int opens_here(fuse_ino_t ino, struct fuse_file_info *fi);
// 1: the note is openable here, and `st` and `timeout` are the attributes JavaScript gave with it
// (a GETATTR is answered with them); 0: JavaScript answers.
int opens_attr(fuse_ino_t ino, struct stat *st, double *timeout);
// A handle made here was released: 1 when that needs nothing more (the caller replies); 0 when
// JavaScript must hear of it (the last one of a note it watches).
int opens_released_here(fuse_ino_t ino);
// Every note: read-only opens go to JavaScript again (the binding's session ended).
void opens_reset(void);

// JavaScript's side (src/fuse/binding.ts documents each).
napi_value opens_openable(napi_env env, napi_callback_info info);
napi_value opens_openable_none(napi_env env, napi_callback_info info);
napi_value opens_opened(napi_env env, napi_callback_info info);
napi_value opens_count(napi_env env, napi_callback_info info);
napi_value opens_watch(napi_env env, napi_callback_info info);
napi_value opens_forget(napi_env env, napi_callback_info info);
