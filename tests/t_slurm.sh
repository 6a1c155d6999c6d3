# t_slurm.sh -- psring under a real Slurm: experiments/slurm_local.sh starts
# munged, slurmctld and slurmd from Debian's packages in a folder of its
# own, runs the ring (srun -n 4 ring_worker: rank and world from
# SLURM_PROCID/SLURM_NTASKS, the coordinator from MASTER_ADDR/MASTER_PORT)
# and the parameter server (srun --multi-prog: 2 servers, 4 workers), checks
# every rank's weights against bin/reference's, and tears it all down, on
# ^C too; with --batch also the cluster recipes experiments/slurm/*.sbatch
# (docs/cluster.md) through sbatch. Needs root and slurm-wlm + munge (`make check` installs them with
# `make deps-check`, experiments/deps.sh); skips, saying so, without them.
# tier: full
. "$PSR_TESTS/lib.sh"
sl="$PSR_TESTS/../experiments/slurm_local.sh"

t_need slurm-1 "Slurm" ring_worker ps_server ps_worker reference
for c in munged slurmctld slurmd srun; do
    if ! command -v $c >/dev/null 2>&1; then
        t_skip slurm-1 "Slurm" "no '$c' on PATH: apt-get install slurm-wlm munge (make deps-check does, as root)"
        t_exit
    fi
done
if [ "$(id -u)" != 0 ]; then
    t_skip slurm-1 "Slurm" "slurmd starts the tasks as root: run as root"
    t_exit
fi
if ! awk '$2 ~ /^\/sys\/fs\/cgroup(\/|$)/ && $3 ~ /^cgroup/ { found = 1 } END { exit !found }' /proc/mounts; then
    t_skip slurm-1 "Slurm" "no cgroup filesystem at /sys/fs/cgroup (a chroot or a container?): slurmd 22.05 cannot start without one"
    t_exit
fi
# The script's folders go under $tmpd: what is left there, and any process
# whose command line names it, is a leak.
tmpd=$T_TMP/tmpd
mkdir "$tmpd"
leftovers() {
    _l=$(ls -A "$tmpd")
    [ -z "$_l" ] || t_fail "left in TMPDIR: $_l"
    _p=$(pgrep -af "$tmpd" | grep -v pgrep)
    [ -z "$_p" ] || t_fail "processes left: $_p"
}

t_case slurm-1.1 "linreg f64: ring K=4 under srun, PS K=4 S=2 under srun --multi-prog == big batch within 1e-12; all torn down"
job 120 env TMPDIR="$tmpd" "$sl" --K 4 --servers 2 --steps 20
expect_rc 0
grep -q '^slurm_local.sh: Slurm up in .* CPUs=8' "$T_TMP/err" || t_fail "no 'Slurm up' line: $(head -c 400 "$T_TMP/err")"
grep -q '^slurm_local.sh: ring K=4 (srun -n 4 ring_worker): ok in .* within 1e-12 relative' "$T_TMP/err" ||
    t_fail "the ring did not match: $(cat "$T_TMP/err")"
grep -q '^slurm_local.sh: ps K=4 S=2 (srun -n 6 --multi-prog): ok in .* within 1e-12 relative' "$T_TMP/err" ||
    t_fail "the parameter server did not match: $(cat "$T_TMP/err")"
leftovers
t_end

t_case slurm-1.2 "synthetic, --batch --keep: srun and docs/cluster.md's sbatch recipes, ranks from Slurm, workers from %o, weights exactly the reference's"
job 120 env TMPDIR="$tmpd" "$sl" --batch --keep --workload synthetic --params 8192 --dtype f64 --steps 4
expect_rc 0
[ "$(grep -c "exactly the reference's" "$T_TMP/err")" = 4 ] || t_fail "not all four exact: $(cat "$T_TMP/err")"
grep -q 'ring K=4 (sbatch experiments/slurm/ring.sbatch): ok' "$T_TMP/err" &&
    grep -q 'ps K=4 S=2 (sbatch experiments/slurm/ps.sbatch): ok' "$T_TMP/err" || t_fail "no batch jobs: $(cat "$T_TMP/err")"
d=$(ls -d "$tmpd"/psr-slurm.* 2>/dev/null | head -n 1)
if [ -z "$d" ]; then
    t_fail "--keep kept no folder"
else
    for r in 0 1 2 3; do
        grep -q "ring_worker\[$r\]: rank $r of 4 (rank from slurm)" "$d/ring.out" ||
            t_fail "ring rank $r did not take rank $r of 4 from Slurm: $(head -c 300 "$d/ring.out")"
        grep -q "ps_worker\[$r\]: rank $r of 4 (from flags)" "$d/ps.out" ||
            t_fail "worker $r is not rank $r of 4: $(head -c 300 "$d/ps.out")"
    done
    grep -q '^2-5 .*/ps_worker --rank %o --world 4 ' "$d/ps.conf" || t_fail "ps.conf: $(cat "$d/ps.conf")"
    grep -q "ring_worker\[0\]: rank 0 of 4 (rank from slurm)" "$d/bring.job" || t_fail "batch ring: $(head -c 300 "$d/bring.job")"
    grep -q "ps_worker\[3\]: rank 3 of 4 (from flags)" "$d/bps.job" || t_fail "batch ps: $(head -c 300 "$d/bps.job")"
    grep -q '^ProctrackType=proctrack/linuxproc' "$d/slurm.conf" && grep -q '^TaskPlugin=task/none' "$d/slurm.conf" ||
        t_fail "slurm.conf without linuxproc/task none"
    rm -rf "$d"
fi
leftovers
t_end

t_case slurm-1.3 "SIGINT while the ring runs under srun: exit 130, Slurm and every rank stopped, folder removed"
# env --default-signal: a background job of sh starts with SIGINT ignored,
# which bash could not trap.
env --default-signal=INT TMPDIR="$tmpd" "$sl" --only ring --steps 100000000 --time-limit 100 \
    >"$T_TMP/int.out" 2>"$T_TMP/int.err" </dev/null &
pid=$!
i=0 up=""
while [ $i -lt 600 ]; do
    up=$(pgrep -f "ring_worker.*$tmpd" | head -n 1)
    [ -n "$up" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
    i=$((i + 1))
done
if [ -z "$up" ]; then
    t_fail "no ring_worker under srun within 30 s: $(cat "$T_TMP/int.err")"
    kill -TERM "$pid" 2>/dev/null
fi
kill -INT "$pid" 2>/dev/null
i=0
while [ $i -lt 200 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
    t_fail "still running 10 s after SIGINT"
    kill -KILL "$pid" 2>/dev/null
fi
wait "$pid"
st=$?
[ "$st" = 130 ] || t_fail "exit status $st after SIGINT, want 130: $(cat "$T_TMP/int.err")"
grep -q 'interrupted; tearing Slurm down' "$T_TMP/int.err" || t_fail "no word of the interrupt: $(cat "$T_TMP/int.err")"
leftovers
t_end

t_case slurm-1.4 "every rank fails at start under srun (mlp with --params): exit 1, their line shown, all torn down"
# ring_worker's parser passes the pair (flags_check), its checks after
# parsing refuse it: a failure inside the job, not before it.
job 60 env TMPDIR="$tmpd" "$sl" --only ring --workload mlp --params 5
expect_rc 1
grep -q '^slurm_local.sh: ring K=4 (srun -n 4 ring_worker): exit status 64 after' "$T_TMP/err" &&
    grep -q '^ring_worker: --params: the mlp has fixed dims' "$T_TMP/err" || t_fail "the failure not said: $(cat "$T_TMP/err")"
leftovers
t_end

t_case slurm-1.5 "usage: --K 0 and --only both: one line, exit 64"
job 10 "$sl" --K 0
expect_rc 64
[ "$(cat "$T_TMP/err")" = "slurm_local.sh: --K 0: not a rank count 1..256; see slurm_local.sh --help" ] ||
    t_fail "--K 0: $(cat "$T_TMP/err")"
job 10 "$sl" --only both
expect_rc 64
[ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -- "--only both: not ring or ps; see slurm_local.sh --help" "$T_TMP/err" ||
    t_fail "--only both: $(cat "$T_TMP/err")"
t_end
t_exit
