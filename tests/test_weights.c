/* test_weights.c -- the --weights-out file (common/train/weights.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/dtype.h"
#include "base/err.h"
#include "train/weights.h"

static char dir[] = "/tmp/psring-weights.XXXXXX";

/* read_back: the file's lines as doubles; returns the count (or -1). */
static int read_back(const char *file, double *v, int cap)
{
    FILE *f = fopen(file, "r");
    int n = 0;
    if (!f)
        return -1;
    while (n < cap && fscanf(f, "%lf", &v[n]) == 1)
        n++;
    fclose(f);
    return n;
}

int main(void)
{
    char err[ERR_LEN], path[256], file[300];
    double d[5] = { 0.1, -1.0 / 3.0, 1e-310, 6.02214076e23, -0.0 }, back[8];
    float f[3] = { 0.1f, -2.5f, 3.4028235e38f };

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/w", dir);

    T_CASE("weights-1.1", "f64: PATH.RANK, one value per line, read back bit for bit");
    T_EQ_I(weights_write(path, 3, d, 5, DTYPE_F64, err), 0);
    snprintf(file, sizeof file, "%s.3", path);
    T_EQ_I(read_back(file, back, 8), 5);
    for (int i = 0; i < 5; i++)
        T_TRUE(memcmp(&back[i], &d[i], sizeof d[i]) == 0);

    T_CASE("weights-1.2", "f32: each element widened exactly, rank 0");
    T_EQ_I(weights_write(path, 0, f, 3, DTYPE_F32, err), 0);
    snprintf(file, sizeof file, "%s.0", path);
    T_EQ_I(read_back(file, back, 8), 3);
    for (int i = 0; i < 3; i++)
        T_EQ_D(back[i], (double)f[i]);

    T_CASE("weights-1.3", "a missing folder: an error naming the file, nothing written");
    snprintf(path, sizeof path, "%s/no/such/dir/w", dir);
    T_TRUE(weights_write(path, 1, d, 5, DTYPE_F64, err) < 0);
    T_HAS(err, "--weights-out: cannot write");
    T_HAS(err, "/no/such/dir/w.1");

    snprintf(file, sizeof file, "%s/w.3", dir); unlink(file);
    snprintf(file, sizeof file, "%s/w.0", dir); unlink(file);
    rmdir(dir);
    return t_done();
}
