/* jsonl.h -- JSON Lines beside the CSV: one object a line, so that a file
 * appended to stays valid (docs/design.md, JSON LINES).
 *
 * Every JSON psring writes (the programs' --json, psr_merge and
 * psring_sim's --json-out, the lab's NAME.json beside each NAME.csv) is
 * made here, from the same text the CSV or the record holds, by one rule:
 *
 *   ""              null   (an empty CSV field, a record's "-")
 *   a JSON number   the number, its text as it is ("1e+06", "0.25", "-3")
 *   anything else   a string, escaped ("\"", "\\", control bytes \u00XX)
 *
 * So a reader gets the CSV's columns, names and units, and a checker can
 * compare the two texts field by field. Each line is a flat object whose
 * first member says what it is: {"record":"manifest",...} (the facts of
 * the run: program, version, command, date, machine; jsonl_manifest),
 * {"record":"row",...} (one CSV row, the header's names in order),
 * {"record":"process",...} / {"record":"step",...} (a program's record,
 * metrics.h RECORD FILE).
 *
 * The functions write to a stdio stream (an open_memstream buffer handed to
 * outfile.h, or outfile_append's stream); their scratch (line copies, the
 * manifest's facts) is on the heap and freed before they return, so they
 * are safe from any thread and keep off its stack.
 */
#ifndef JSONL_H
#define JSONL_H

#include <stddef.h>
#include <stdio.h>

/* jsonl_is_number: whether s[0..n) is a number in JSON's grammar. */
int jsonl_is_number(const char *s, size_t n);

/* jsonl_value: s[0..n) by the rule above. */
void jsonl_value(FILE *f, const char *s, size_t n);

/* jsonl_string: s[0..n) as a JSON string, quotes included. */
void jsonl_string(FILE *f, const char *s, size_t n);

/* jsonl_object: one line, {"record":"KIND","NAME":VALUE,...} and "\n";
 * vals[i] typed by jsonl_value (NULL: null). */
void jsonl_object(FILE *f, const char *kind, const char *const *names,
                  const char *const *vals, size_t n);

/* jsonl_csv_row: one CSV row under its header (both one line, "\n"
 * optional; RFC 4180 quoting read: "a,""b""" is a,"b") as a "row" object.
 * 0, or ERR_FORMAT with the reason in err[ERR_LEN] when the counts differ
 * or a line is too long (JSONL_FIELDS_MAX fields, JSONL_LINE_MAX bytes). */
#define JSONL_FIELDS_MAX 128
#define JSONL_LINE_MAX 8192
int jsonl_csv_row(FILE *f, const char *header, const char *row, char *err);

/* jsonl_manifest: the "manifest" line: program (argv[0]'s name), version,
 * command (this process's command line, /proc/self/cmdline, arguments
 * joined by spaces), date (UTC, ISO 8601), host, kernel, ncpu, loadavg
 * (/proc/loadavg's first three); then each "KEY: VALUE" line of `text`
 * (NULL: none; lines starting "#" and lines without ": " are skipped;
 * a key given twice keeps its first value; the text's "command", a
 * launcher's, replaces both program and command), so that a lab's
 * manifest.txt or a launcher's facts (git: the commit) join them. */
void jsonl_manifest(FILE *f, const char *text);

/* jsonl_csv_text: a whole CSV (header line, then rows) as JSON Lines: the
 * manifest line (text as above), then one "row" line per row; blank lines
 * skipped. 0, or ERR_FORMAT with "line N: reason" in err. */
int jsonl_csv_text(FILE *f, const char *csv, const char *manifest, char *err);

/* jsonl_read_text: the whole of a text file (a CSV, a manifest) read
 * through infile.h (a FIFO or device refused, never waited on), at most
 * JSONL_TEXT_MAX bytes, NUL-terminated; the caller frees it. NULL with
 * "FLAG: PATH: reason" in err (*rc: the negative code). */
#define JSONL_TEXT_MAX (64 << 20)
char *jsonl_read_text(const char *flag, const char *path, int *rc, char *err);

#endif /* JSONL_H */
