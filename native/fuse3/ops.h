// Generated from src/fuse/protocol.ts by `npm run gen:fuse-ops`: edit that file, not this one
// (test/fuse/opsHeader.test.ts fails while the two differ). protocol.ts says what each means.
#pragma once
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

// The operations handed to JavaScript.
enum {
  OP_LOOKUP = 1,
  OP_FORGET = 2,
  OP_GETATTR = 3,
  OP_SETATTR = 4,
  OP_READLINK = 5,
  OP_MKDIR = 6,
  OP_UNLINK = 7,
  OP_RMDIR = 8,
  OP_SYMLINK = 9,
  OP_RENAME = 10,
  OP_OPEN = 11,
  OP_READ = 12,
  OP_WRITE = 13,
  OP_FLUSH = 14,
  OP_RELEASE = 15,
  OP_FSYNC = 16,
  OP_READDIRPLUS = 17,
  OP_STATFS = 18,
  OP_SETXATTR = 19,
  OP_GETXATTR = 20,
  OP_LISTXATTR = 21,
  OP_REMOVEXATTR = 22,
  OP_CREATE = 23,
  OP_HELD = 24,
  OP_MKNOD = 25,
};

// The bits of an open or create answer.
#define OPEN_DIRECT_IO 1u
#define OPEN_KEEP_CACHE 2u
#define OPEN_NO_FLUSH 4u
#define OPEN_HOLD_WRITES 8u

// Handles of read-only opens answered here carry this bit.
#define NATIVE_FH 0x80000000u

// setattr's bits as JavaScript decodes them: libfuse's own.
_Static_assert(FUSE_SET_ATTR_MODE == 1, "src/fuse/protocol.ts: SetAttr.MODE");
_Static_assert(FUSE_SET_ATTR_UID == 2, "src/fuse/protocol.ts: SetAttr.UID");
_Static_assert(FUSE_SET_ATTR_GID == 4, "src/fuse/protocol.ts: SetAttr.GID");
_Static_assert(FUSE_SET_ATTR_SIZE == 8, "src/fuse/protocol.ts: SetAttr.SIZE");
_Static_assert(FUSE_SET_ATTR_ATIME == 16, "src/fuse/protocol.ts: SetAttr.ATIME");
_Static_assert(FUSE_SET_ATTR_MTIME == 32, "src/fuse/protocol.ts: SetAttr.MTIME");
_Static_assert(FUSE_SET_ATTR_ATIME_NOW == 128, "src/fuse/protocol.ts: SetAttr.ATIME_NOW");
_Static_assert(FUSE_SET_ATTR_MTIME_NOW == 256, "src/fuse/protocol.ts: SetAttr.MTIME_NOW");
