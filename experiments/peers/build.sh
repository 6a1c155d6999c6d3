#!/bin/sh
# experiments/peers/build.sh [OUTDIR] -- build the peer programs the ring is
# compared with: mpi_coll, a timing harness of an MPI's collectives
# (MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast,
# MPI_Reduce, MPI_Alltoall), once per MPI installed, from the one source:
#
#   OUTDIR/mpi_coll        Open MPI's (mpicc.openmpi; Debian: openmpi-bin
#                          libopenmpi-dev), run with mpirun.openmpi
#   OUTDIR/mpi_coll.mpich  MPICH's (mpicc.mpich; Debian: mpich
#                          libmpich-dev), run with mpirun.mpich
#
# Each compiler wrapper is called by its own name, never plain mpicc, which
# whichever MPI was installed last owns. The main Makefile never builds
# these. Output: OUTDIR (default build/peers). A missing MPI is a note and
# no binary, exit 0, so callers can skip that peer; a failed build exits 1.
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/peers}
flags="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wstrict-prototypes -Wshadow -Wformat=2 -Wvla -Werror"
mkdir -p "$out" || exit 1
rc=0
if command -v mpicc.openmpi >/dev/null 2>&1; then
    (set -x; mpicc.openmpi $flags -o "$out/mpi_coll" "$here/mpi_coll.c") || rc=1
else
    echo "peers/build.sh: mpicc.openmpi not found (apt-get install openmpi-bin libopenmpi-dev); skipping the Open MPI peer"
fi
if command -v mpicc.mpich >/dev/null 2>&1; then
    (set -x; mpicc.mpich $flags -o "$out/mpi_coll.mpich" "$here/mpi_coll.c") || rc=1
else
    echo "peers/build.sh: mpicc.mpich not found (apt-get install mpich libmpich-dev); skipping the MPICH peer"
fi
exit $rc
