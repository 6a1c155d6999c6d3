#!/bin/sh
# experiments/peers/build.sh [OUTDIR] -- build the peer programs the ring is
# compared with (today: mpi_coll, a timing harness of Open MPI's collectives:
# MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast, MPI_Reduce,
# MPI_Alltoall).
#
# Only where Open MPI's compiler wrapper is installed (Debian: openmpi-bin
# libopenmpi-dev); called mpicc.openmpi by name, never plain mpicc, which
# another MPI (MPICH) installed beside it may own. The main Makefile never
# builds these. Output: OUTDIR (default build/peers). Exit 0 with a note
# when mpicc.openmpi is missing, so callers can skip the peer.
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/peers}
if ! command -v mpicc.openmpi >/dev/null 2>&1; then
    echo "peers/build.sh: mpicc.openmpi not found (apt-get install openmpi-bin libopenmpi-dev); skipping the MPI peer"
    exit 0
fi
mkdir -p "$out" || exit 1
set -x
mpicc.openmpi -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wstrict-prototypes -Wshadow -Wformat=2 -Wvla \
    -Werror -o "$out/mpi_coll" "$here/mpi_coll.c"
