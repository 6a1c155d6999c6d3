# tier: full
# t_handout_sim.sh -- docs/lab.md's exercise 13, the star, the 25 MiB
# buckets and the K = 512 straggler and jitter (psring_sim):
# tests/t_handout.sh's third part (HANDOUT_PART=sim; that file says why
# it is split).
HANDOUT_PART=sim
. "$PSR_TESTS/t_handout.sh"
