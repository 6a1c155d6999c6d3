/* cli_internal.h -- what the three files of the command line share and no
 * one else needs: quoting a user's value for a one-line message.
 * (cli.h and train/cli_common.h are the interfaces; this is the internal
 * header, which compute.c's parsers use too.)
 */
#ifndef CLI_INTERNAL_H
#define CLI_INTERNAL_H

#define CLI_QUOTE_MAX 40                           /* bytes of a value echoed */
#define CLI_QUOTE_BUF (CLI_QUOTE_MAX * 4 + 8)      /* what cli_clean may write */

/* cli_clean: s for a message, cut at CLI_QUOTE_MAX bytes ("..." marks the
 * cut) with non-printable bytes as \xNN, so that a value holding a newline
 * cannot break the one-line contract; in single quotes when quoted. OUT:
 * buf (CLI_QUOTE_BUF bytes), which is returned. */
const char *cli_clean(const char *s, char *buf, int quoted);

/* cli_quote: s as 'text' (see cli_clean). */
const char *cli_quote(const char *s, char *buf);

#endif /* CLI_INTERNAL_H */
