/* mem.h -- memory that really goes back to the system, and what a process
 * holds.
 *
 * The buffers whose size a ZeRO stage changes (the optimizer state, the
 * gradient, the parameters; docs/design.md, ZeRO) come from mem_map: an
 * anonymous private mapping, page-aligned, zero-filled, that the kernel
 * backs page by page as it is first written. mem_unmap gives it back at
 * once, and mem_release(p, bytes) gives back the whole pages inside a
 * range while keeping the mapping (madvise MADV_DONTNEED: the next read
 * sees zeros, the next write faults a page in), so a free shows in the
 * resident set size (RSS) at once, which malloc's free does not promise.
 *
 * mem_rss and mem_peak_rss read /proc/self/status (VmRSS, VmHWM): the
 * resident set now and its peak since the process started, in bytes; 0
 * where there is no /proc.
 *
 * MEM_FREE(p): free(p), then p = NULL, for the _destroy functions that
 * leave a struct safe to destroy twice. p is an lvalue, evaluated twice.
 */
#ifndef MEM_H
#define MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define MEM_FREE(p) \
    do {            \
        free(p);    \
        (p) = NULL; \
    } while (0)

/* mem_map: bytes (0 is taken as 1) of zeroed memory, or NULL. */
void *mem_map(size_t bytes);
/* mem_unmap: p from mem_map with the same bytes; NULL is fine. */
void mem_unmap(void *p, size_t bytes);
/* mem_release: the whole pages inside [p, p + bytes) go back to the
 * system; their contents read as zero afterwards. p must be inside a
 * mem_map mapping. */
void mem_release(void *p, size_t bytes);

uint64_t mem_rss(void);
uint64_t mem_peak_rss(void);

#endif /* MEM_H */
