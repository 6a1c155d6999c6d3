/* dtype.h -- the element types gradients and weights travel in.
 *
 * The numeric values are on the wire (proto.h HELLO) and never change.
 */
#ifndef DTYPE_H
#define DTYPE_H

#include <stddef.h>

enum dtype {
    DTYPE_F32 = 1,
    DTYPE_F64 = 2,
};

/* dtype_size: bytes per element; 0 for a value that is not a dtype. */
size_t dtype_size(int dt);
/* dtype_name: "f32", "f64", or "?" */
const char *dtype_name(int dt);
/* dtype_parse: "f32"/"f64" -> 0 and *out; anything else -> ERR_USAGE. */
int dtype_parse(const char *s, int *out);

#endif /* DTYPE_H */
