{
  "targets": [{
    "target_name": "txtfs_fuse3",
    "sources": ["txtfs_fuse3.c", "opens.c", "names.c", "held.c", "flushes.c"],
    "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "<!@(pkg-config --cflags fuse3)"],
    "libraries": ["<!@(pkg-config --libs fuse3)"]
  }]
}
