/* dtype.c -- element types (see dtype.h). */
#include "dtype.h"

#include <string.h>

#include "err.h"

size_t dtype_size(int dt)
{
    switch (dt) {
    case DTYPE_F32: return 4;
    case DTYPE_F64: return 8;
    default: return 0;
    }
}

const char *dtype_name(int dt)
{
    switch (dt) {
    case DTYPE_F32: return "f32";
    case DTYPE_F64: return "f64";
    default: return "?";
    }
}

int dtype_parse(const char *s, int *out)
{
    if (strcmp(s, "f32") == 0) { *out = DTYPE_F32; return 0; }
    if (strcmp(s, "f64") == 0) { *out = DTYPE_F64; return 0; }
    return ERR_USAGE;
}
