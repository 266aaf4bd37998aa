// What the binding's C files share: JavaScript arguments and numbers, and the clock.
#pragma once
#include <node_api.h>
#include <stdint.h>
#include <time.h>

// The call's arguments into argv (room for n); how many were given (0 when none could be read).
static inline size_t js_args(napi_env env, napi_callback_info info, napi_value *argv, size_t n) {
  size_t argc = n;
  return napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok ? argc : 0;
}

static inline double js_double(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

static inline napi_value js_number(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

static inline uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
