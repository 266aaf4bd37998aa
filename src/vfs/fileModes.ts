// The file-type bits of a stat mode (as in <sys/stat.h>).
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
