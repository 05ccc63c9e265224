/* A dependency of scope_plugin.c (tests/interposed.rs). */
int dep_symbol(void) { return 42; }
