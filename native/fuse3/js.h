// What the binding's C files share: JavaScript arguments and numbers, times, and the clock.
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

// Milliseconds since 1970 (as JavaScript's Date keeps them) as a timespec.
static inline struct timespec ms_to_timespec(double ms) {
  struct timespec ts;
  double s = ms / 1000.0;
  ts.tv_sec = (time_t)s;
  if ((double)ts.tv_sec > s) ts.tv_sec--; // before 1970
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  if (ts.tv_nsec < 0) ts.tv_nsec = 0;
  return ts;
}

static inline uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
