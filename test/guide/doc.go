// Package guide checks the user's guide (docs/guide/*.md) and the README:
// it runs the shell sessions of their ```console blocks, each page against
// fresh `admitd serve`s of its own (one per server block, or one started
// before its first session), and compares what the commands print with
// what the page shows, so that the guide cannot rot. It has no code of its
// own besides the test; it is not a library. The conventions a page follows
// are in docs/guide/README.md ("How these pages are checked").
package guide
