/* gpu_err.c -- the error lines of gpu/, shared by every build (the CUDA
 * one and the stub); the CUDA-specific part, gpu_cuda_fail, is in
 * gpu_device.c. See gpu_internal.h. */
#include <stdarg.h>
#include <stdio.h>

#include "base/dtype.h"
#include "base/err.h"
#include "gpu_internal.h"

int gpu_say(char *err, int rc, const char *fmt, ...)
{
    va_list ap;

    if (err) {
        va_start(ap, fmt);
        vsnprintf(err, ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int gpu_check_dtype(int dtype, const char *what, char *err)
{
    if (dtype == DTYPE_F32 || dtype == DTYPE_F64)
        return 0;
    return gpu_say(err, ERR_USAGE, "%s: dtype %d is neither f32 nor f64", what, dtype);
}
