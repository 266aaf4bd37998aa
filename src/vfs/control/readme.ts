// The README inside `.txtfs/`: what the tree holds, for people and for agents with only a shell.
export const README = `txtfs control directory
=======================

This directory is not listed (ls -a, find, grep -r, rm -rf, du and rsync never enter it) but it
is reachable by its path. It shows what the service knows about your notes, as files:

versions/PATH/      every version of the note (or other file) at PATH, newest first, read-only:
                    "0007 2026-11-20T10-12 label.md" (number, UTC date, label if any;
                    a file that is not a note keeps its own extension: "0002 ....png").
                    cat a version to read it; "cat .txtfs/versions/PATH/7" also works.
                    cp VERSION PATH           writes those bytes as a new version of the note
                                              (same note, same id; an ordinary save).
                    setfattr -n user.txtfs.restore -v 7 PATH
                                              the service's restore of version 7 (recorded as a
                                              restore; refused if the note changed since).
                    setfattr -n user.txtfs.commit -v LABEL PATH
                                              labels the current version (kept for good).

tags/TAG/           a symlink to every note tagged TAG.
                    ln -s ../../../PATH .txtfs/tags/TAG/   tags the note (the link's target is
                                              relative to .txtfs/tags/TAG/, or give an absolute path;
                                              the link is named as the note)
                    rm .txtfs/tags/TAG/NAME   untags that note
                    mkdir .txtfs/tags/TAG     a new tag, empty until a note gets it

related/PATH/       the note's related notes, ranked: "01 name.md -> ../../../folder/name.md".
                    getfattr -n user.txtfs.reasons .txtfs/related/PATH
                                              why each is related (JSON, by link name)
                    ln -s TARGET .txtfs/related/PATH/   connects the two notes; the reason is the
                                              value of user.txtfs.reason set on that directory
                                              (setfattr -n user.txtfs.reason -v WHY ...), if any
                    rm .txtfs/related/PATH/"01 name.md" disconnects an explicit connection
                                              (inferred ones cannot be removed: EPERM)

links/unresolved    every link in your notes that names no note: "NOTE<TAB>[[LINK TEXT]]" a line
                    (after a rename, the links to the old name show here: edit them to fix).
links/PATH/to/      the notes the note at PATH links to, in the order first written:
                    "01 name.md -> ../../../../folder/name.md"
links/PATH/from/    the notes linking to it (backlinks), by path
links/PATH/unresolved   its own links that name no note, one a line. Read-only: a link is
                    changed by editing the note that holds it.

search/QUERY/       ls .txtfs/search/'two words'/  ranked symlinks to the notes containing every
                    word (the last one may be a prefix); one request per listing.

comments/PATH       the note's comment threads and pending suggestions as Markdown, read-only.
                    To comment, append a quote of the note's text, then your comment:
                      printf '> text of the note\\nMy comment\\n' >> .txtfs/comments/PATH
                    Lines starting with "> " are the quote (it must occur in the note; the first
                    occurrence is the anchor); the rest is the comment. Anything else: EINVAL.

Everything follows the service: a new version, tag, connection or comment shows within 2 s.
What your role does not allow (a reader tagging, connecting, restoring) fails with EACCES.
`;
