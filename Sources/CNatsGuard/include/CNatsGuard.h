#ifndef CNATS_GUARD_H
#define CNATS_GUARD_H

/// Whether this process's `strdup` is Canopy's (strdup_guard.c), which answers NULL for NULL: nats.c 3.4.1's
/// `js_Subscribe` copies the consumer's name from JetStream's answer with `strdup` without checking that the answer
/// has one, and libc's `strdup(NULL)` crashes the process (docs/reliability.md, "The crash in `strdup`").
int canopy_strdup_guard_installed(void);

#endif
