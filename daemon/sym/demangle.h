/* C++ (and Rust legacy, which uses the same scheme) symbol demangling,
 * through libstdc++'s __cxa_demangle loaded at run time: no link-time
 * dependency, and names stay mangled where libstdc++ is absent. */
#ifndef GT_SYM_DEMANGLE_H
#define GT_SYM_DEMANGLE_H

/* Demangled copy of name (free() it), or NULL if name is not mangled or
 * cannot be demangled here. */
char *gt_demangle(const char *name);

#endif
