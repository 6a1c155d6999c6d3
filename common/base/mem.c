/* mem.c -- mapped buffers and the resident set (mem.h says why). */
#include "mem.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *mem_map(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

void mem_unmap(void *p, size_t bytes)
{
    if (p)
        (void)munmap(p, bytes ? bytes : 1);
}

void mem_release(void *p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);

    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* status_kib: the "NAME:   N kB" line of /proc/self/status, in bytes. */
static uint64_t status_kib(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t len = strlen(name);
    unsigned long long kib = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            if (sscanf(line + len + 1, "%llu", &kib) != 1)
                kib = 0;
            break;
        }
    fclose(f);
    return (uint64_t)kib * 1024;
}

uint64_t mem_rss(void)
{
    return status_kib("VmRSS");
}

uint64_t mem_peak_rss(void)
{
    return status_kib("VmHWM");
}
