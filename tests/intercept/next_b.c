/* next_b.c — libnext_b.so for test_dlsym_next: the next definition after libnext_a.so. */
int ash_next_target(void) { return 2; }
