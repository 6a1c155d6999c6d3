# tier: full
# t_handout_labs.sh -- docs/lab.md's commands from exercise 10 on (the
# server placements, ZeRO, the stragglers, the mlp): tests/t_handout.sh's
# second part (HANDOUT_PART=labs; that file says why it is split).
HANDOUT_PART=labs
. "$PSR_TESTS/t_handout.sh"
