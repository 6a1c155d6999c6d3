# tier: full
# t_handout_sim.sh -- docs/lab.md's exercise 13, the star and the 25 MiB
# buckets (psring_sim's seed table): tests/t_handout.sh's third part
# (HANDOUT_PART=sim; that file says why it is split).
HANDOUT_PART=sim
. "$PSR_TESTS/t_handout.sh"
