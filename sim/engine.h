/* engine.h -- bin/psring_sim's side of SimGrid: the platform written or
 * read and loaded with the network model (main.c's THE NETWORK MODEL) and
 * --sg-cfg, what the user gave tried first in a child (SimGrid aborts on
 * what it does not know), and one actor per slot started on its host.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stddef.h>

#include "flags.h"
#include "platform.h"
#include "sim.h"

/* sim_platform_load: the platform file (--platform file:PATH, or written
 * to xml: --platform-out or a temporary one, *tmp_xml), then SimGrid with
 * the network model and --sg-cfg. 1 when the file cannot be written (one
 * line on stderr), else 0; a refused setting or too few hosts exit 64. */
int sim_platform_load(char *argv0, const struct sim_opts *o, const struct cli_common *c,
                      const struct platform *pf, const struct sim_job *j, int nhosts,
                      char *xml, size_t xml_len, int *tmp_xml);

/* sim_actors_start: one actor per slot (ring ranks, PS workers, then the
 * servers) on its host, each with its record's fixed columns. */
void sim_actors_start(const struct sim_opts *o, const struct cli_common *c,
                      const struct platform *pf, const struct sim_job *j,
                      struct sim_slot *slots, int nslots);

#endif /* SIM_ENGINE_H */
