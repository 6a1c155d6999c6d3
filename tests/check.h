/* check.h -- the tiny assert header every unit-test program includes.
 *
 * A test program is a list of cases. Each case has a stable id that
 * begins with the program's name ("proto-1.4" in test_proto.c; the rule
 * is in tests/ids.awk) and a name; checks inside it print both values
 * when they fail, and the case prints one line at its end:
 *
 *     ok   proto-1.4 length cap refused before allocation
 *     FAIL proto-1.5 ...            (after the failing checks' details)
 *     skip gpu-1.1 no GPU: ...
 *
 * tests/run.sh counts those lines; the program's exit status is 1 when any
 * case failed. Include this header once per program (it defines state).
 * A loop over a table of rows calls t_row("'%s'", row->in) on each row, so
 * that a failing check names the row as well as its own file:line.
 *
 *     T_CASE("sgd-1.1", "update divides by the global batch");
 *     T_NEAR(w[0], -0.5, 1e-15);
 *     T_END();
 *     ...
 *     return t_done();
 */
#ifndef CHECK_H
#define CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
    const char *id, *name;
    char row[160];          /* the table row being checked, or "" */
    int case_failed, in_case;
    int passed, failed, skipped;
} t_state;

__attribute__((unused)) static void t_begin(const char *id, const char *name)
{
    t_state.id = id;
    t_state.name = name;
    t_state.row[0] = '\0';
    t_state.case_failed = 0;
    t_state.in_case = 1;
}

__attribute__((unused)) static void t_end(void)
{
    if (!t_state.in_case)
        return;
    t_state.in_case = 0;
    if (t_state.case_failed) {
        t_state.failed++;
        printf("FAIL %s %s\n", t_state.id, t_state.name);
    } else {
        t_state.passed++;
        printf("ok   %s %s\n", t_state.id, t_state.name);
    }
    fflush(stdout);
}

__attribute__((unused)) static void t_skip(const char *id, const char *name, const char *reason)
{
    t_state.skipped++;
    printf("skip %s %s: %s\n", id, name, reason);
    fflush(stdout);
}

__attribute__((format(printf, 4, 5)))
static void t_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    t_state.case_failed = 1;
    printf("     %s:%d: %s [%s]: ", file, line, t_state.id ? t_state.id : "?", expr);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (t_state.row[0])
        printf(" (row %s)", t_state.row);
    printf("\n");
}

/* t_row: a loop over a table of cases names the row it is on, so that a
 * check failing in a shared helper says which row failed. */
__attribute__((format(printf, 1, 2), unused))
static void t_row(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_state.row, sizeof t_state.row, fmt, ap);
    va_end(ap);
}

__attribute__((unused)) static int t_done(void)
{
    t_end();
    return t_state.failed ? 1 : 0;
}

#define T_CASE(id, name) (t_end(), t_begin((id), (name)))
#define T_END() t_end()

#define T_TRUE(c) do { if (!(c)) \
    t_fail(__FILE__, __LINE__, #c, "false"); } while (0)

#define T_EQ_I(a, b) do { long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
    if (t_a_ != t_b_) t_fail(__FILE__, __LINE__, #a " == " #b, \
        "got %lld, want %lld", t_a_, t_b_); } while (0)

#define T_EQ_U(a, b) do { unsigned long long t_a_ = (a), t_b_ = (b); \
    if (t_a_ != t_b_) t_fail(__FILE__, __LINE__, #a " == " #b, \
        "got %llu (0x%llx), want %llu (0x%llx)", t_a_, t_a_, t_b_, t_b_); } while (0)

/* Exact floating equality (bit patterns may differ only for 0/-0). */
#define T_EQ_D(a, b) do { double t_a_ = (a), t_b_ = (b); \
    if (!(t_a_ == t_b_)) t_fail(__FILE__, __LINE__, #a " == " #b, \
        "got %.17g, want %.17g", t_a_, t_b_); } while (0)

#define T_NEAR(a, b, tol) do { double t_a_ = (a), t_b_ = (b), t_t_ = (tol); \
    if (!(fabs(t_a_ - t_b_) <= t_t_)) t_fail(__FILE__, __LINE__, #a " ~= " #b, \
        "got %.17g, want %.17g (diff %.3g > tol %.3g)", t_a_, t_b_, \
        fabs(t_a_ - t_b_), t_t_); } while (0)

#define T_LE(a, b) do { double t_a_ = (a), t_b_ = (b); \
    if (!(t_a_ <= t_b_)) t_fail(__FILE__, __LINE__, #a " <= " #b, \
        "got %.6g, bound %.6g", t_a_, t_b_); } while (0)

#define T_STR(a, b) do { const char *t_a_ = (a), *t_b_ = (b); \
    if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0) \
        t_fail(__FILE__, __LINE__, #a " == " #b, "got \"%s\", want \"%s\"", \
            t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)"); } while (0)

/* Substring: a message must name the thing it is about. */
#define T_HAS(hay, needle) do { const char *t_h_ = (hay), *t_n_ = (needle); \
    if (!t_h_ || !strstr(t_h_, t_n_)) t_fail(__FILE__, __LINE__, \
        #hay " contains " #needle, "\"%s\" lacks \"%s\"", \
        t_h_ ? t_h_ : "(null)", t_n_); } while (0)

#endif /* CHECK_H */
