// Lookups of names a folder does not have, answered here without JavaScript (names.c).
// JavaScript's side: src/fuse/kernelCache/folderNames.ts (index.ts there maps every copy).
#pragma once
#define FUSE_USE_VERSION 34
#define NAPI_VERSION 8
#include <fuse_lowlevel.h>
#include <node_api.h>

// 1: `name` is certainly not in the folder `parent` (the caller answers so); 0: JavaScript answers.
int names_absent(fuse_ino_t parent, const char *name);
// Every folder's names are forgotten (the binding's session ended).
void names_reset(void);

// JavaScript's side (src/fuse/binding.ts documents each).
napi_value names_put(napi_env env, napi_callback_info info);
napi_value names_add(napi_env env, napi_callback_info info);
napi_value names_drop(napi_env env, napi_callback_info info);
napi_value names_drop_all(napi_env env, napi_callback_info info);
napi_value names_suffix(napi_env env, napi_callback_info info);
