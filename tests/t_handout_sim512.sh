# tier: full
# t_handout_sim512.sh -- docs/lab.md's exercise 13, the fat-tree and racks
# platforms at K = 512 (psring_sim): tests/t_handout.sh's fourth part
# (HANDOUT_PART=sim512; that file says why it is split).
HANDOUT_PART=sim512
. "$PSR_TESTS/t_handout.sh"
