/* tsan_suppressions.c -- linked into the ThreadSanitizer builds of the CLI
 * and the tests (not into the library: the runtime looks the hook up in
 * the executable, whatever TSAN_OPTIONS a test sets).
 *
 * Debian's oneDNN is not built with TSan: its primitive cache publishes
 * objects through atomics and OpenMP barriers TSan cannot see, so every
 * concurrent primitive creation reports a race on oneDNN's own rwlock.
 * Reports with a oneDNN or libgomp frame are therefore dropped. A race in
 * convsel's own state (the model cache, the oneDNN plan memo, the thread
 * pool) has only convsel frames and is still reported. */
#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) {
    return "race:libdnnl.so\n"
           "race:libgomp.so\n";
}
#else
typedef int tsan_suppressions_unused; /* ISO C wants something in a file */
#endif
