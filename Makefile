# psring build.
#
#   make                      common/ -> build/libcommon.a, programs -> bin/
#   make check                install deps if needed, build, run every test
#   make test-quick           the fast tier (unit tests, no multi-process jobs)
#   make bench                benchmarks: figures, never pass/fail
#   make deps                 install the Debian packages every target uses
#   make deps-lab             ... only those one target uses (lab, check, bench, sim)
#   make SANITIZER=address,undefined check    the suite under ASan+UBSan
#   make DEBUG=1              -O0, for gdb
#
# Sanitizer builds live in build/san/ (binaries in build/san/bin) so they
# never mix objects with the normal build; tests find the binaries through
# PSR_BIN, which the check targets set.

CC       ?= cc
SANITIZER ?=
DEBUG    ?=

ifeq ($(SANITIZER),)
  BUILD := build
  BIN   := bin
else
  BUILD := build/san
  BIN   := build/san/bin
endif

WARN    := -Wall -Wextra -Wstrict-prototypes -Wshadow -Wpointer-arith \
           -Wformat=2 -Wvla -Werror
OPT     := $(if $(DEBUG),-O0,-O2)
# -ffp-contract=off: no fused multiply-add, so a sum is the same on every
# machine and in every process (the ring promises bit-identical results).
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) -g -ffp-contract=off $(WARN) -Icommon -MMD -MP
# libsodium (common/wire/auth.c: HMAC-SHA256, nonces), found with pkg-config;
# lazy, like libuv below, so that `make deps` can install it first.
SODIUM_CFLAGS = $(shell pkg-config --cflags libsodium 2>/dev/null)
SODIUM_LIBS   = $(or $(shell pkg-config --libs libsodium 2>/dev/null),-lsodium)
LDLIBS   = -lm -lpthread $(SODIUM_LIBS)
ifneq ($(SANITIZER),)
  CFLAGS  += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SANITIZER)
endif

# libuv, found with pkg-config (used by ps_server). Evaluated lazily so that
# `make deps` can install it before anything needs it.
UV_CFLAGS = $(shell pkg-config --cflags libuv 2>/dev/null)
UV_LIBS   = $(shell pkg-config --libs libuv 2>/dev/null)

# CUDA and NCCL: nvcc on PATH or under /usr/local/cuda, nccl.h next to it.
# Without them the CPU paths build alone; the build says so once.
NVCC     := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
CUDA_DIR := $(if $(NVCC),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC))))
NCCL_H   := $(firstword $(wildcard $(CUDA_DIR)/include/nccl.h /usr/include/nccl.h))
ifeq ($(MAKELEVEL),0)
  ifeq ($(NVCC),)
    $(info psring: nvcc not found (PATH, /usr/local/cuda): building the CPU paths only)
  else ifeq ($(NCCL_H),)
    $(info psring: CUDA at $(CUDA_DIR) but no nccl.h: building without NCCL)
  endif
endif

# SimGrid (bin/psring_sim, sim/): found with pkg-config or its headers in
# /usr/include/simgrid; without it sim/ is skipped and the build says so once.
SG_FOUND := $(or $(shell pkg-config --exists simgrid 2>/dev/null && echo 1),$(if $(wildcard /usr/include/simgrid/engine.h),1))
SG_CFLAGS = $(shell pkg-config --cflags-only-I simgrid 2>/dev/null | sed 's/-I/-isystem /g')
SG_LIBS   = $(or $(shell pkg-config --libs simgrid 2>/dev/null),-lsimgrid)
# The note only where SimGrid is asked for (make sim, bin/psring_sim):
# nothing else uses it, the lab included.
ifeq ($(MAKELEVEL),0)
  ifeq ($(SG_FOUND),)
    ifneq ($(filter sim deps-sim %psring_sim,$(MAKECMDGOALS)),)
      $(info psring: SimGrid not found (pkg-config simgrid, /usr/include/simgrid): no bin/psring_sim; make deps-sim installs it)
    endif
  endif
endif

# The GPU parts (gpu/) are built by gpu.mk, which sets GPU_LIB (a library
# every system binary and unit test links: the CUDA/NCCL code where nvcc was
# found, stubs that say "built without CUDA" otherwise) and GPU_LDLIBS.
GPU_LIB    :=
GPU_LDLIBS :=
-include gpu.mk

# ---------------------------------------------------------------- sources
# common/ is the shared library, a folder per layer (docs/design.md, THE
# LAYERS): base < measure < wire < train make build/libcommon.a; the
# collective library common/coll/ makes build/libcoll.a (it sits above the
# GPU library, gpu/), the parameter server's common/ps/ build/libps.a.
# Sources include across layers by path ("wire/net.h", with -Icommon).
LAYERS   := base measure wire train
# students/bucket_student.c: the student track's buckets (docs/lab.md, SB),
# in libcommon as shipped (the step driver's hook calls it);
# `make student-bucket STUDENT=FILE` links another in its place.
LIB_SRC  := $(foreach l,$(LAYERS),$(wildcard common/$(l)/*.c)) students/bucket_student.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libcommon.a
# common/coll/xport_sim.c is the SimGrid transport: built into psring_sim only.
# students/ring_student.c: the student track's ring (docs/lab.md, S), in
# libcoll as shipped; `make student STUDENT=FILE` links another in its place.
COLL_SRC := $(filter-out common/coll/xport_sim.c,$(wildcard common/coll/*.c)) students/ring_student.c
COLL_OBJ := $(COLL_SRC:%.c=$(BUILD)/%.o)
COLL_LIB := $(BUILD)/libcoll.a
PS_SRC   := $(wildcard common/ps/*.c)
PS_OBJ   := $(PS_SRC:%.c=$(BUILD)/%.o)
PS_LIB   := $(BUILD)/libps.a

# Every experiments/*.c is one program of its own, bin/<name>.
TOOL_SRC := $(wildcard experiments/*.c)
TOOLS    := $(TOOL_SRC:experiments/%.c=$(BIN)/%)

# The programs: a directory with a main.c becomes bin/<dir>; its other
# sources (flags, set-up) go into build/lib<dir>.a. A program links the
# libraries below it and includes no other program's folder.
SYSTEMS  := ps_server ps_worker ring_worker
SYS_BINS := $(foreach d,$(SYSTEMS),$(if $(wildcard $(d)/main.c),$(BIN)/$(d)))
SYS_LIBS := $(foreach d,$(SYSTEMS),$(if $(filter-out $(d)/main.c,$(wildcard $(d)/*.c)),$(BUILD)/lib$(d).a))
sys_objs  = $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(1)/main.c,$(wildcard $(1)/*.c)))
# What each program links besides its own folder's library and libcommon.
LIBS_ps_server   := $(PS_LIB)
LIBS_ps_worker   := $(PS_LIB)
LIBS_ring_worker := $(COLL_LIB)

# tests/test_<module>.c: one unit-test program per module.
# tests/fuzz_<parser>.c: a fuzz target, linked with tests/fuzzdrv.c into a
# deterministic mutation driver (any compiler) and, with clang, libFuzzer.
TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz_*.c)
FUZZ     := $(FUZZ_SRC:tests/%.c=$(BUILD)/tests/%)
# tests/peer_<name>.c: a helper program the shell tests start (peer_hostile:
# a member with the secret that misbehaves); run.sh does not run it alone.
PEER_SRC := $(wildcard tests/peer_*.c)
PEERS    := $(PEER_SRC:tests/%.c=$(BUILD)/tests/%)

# sim/: bin/psring_sim, the simulated twin of the systems (docs/sim.md),
# linking the collective and the server's libraries and the SimGrid
# transport, only where SimGrid is.
SIM_SRC  := $(wildcard sim/*.c) common/coll/xport_sim.c
SIM_OBJ  := $(SIM_SRC:%.c=$(BUILD)/%.o)
SIM_BIN  := $(if $(SG_FOUND),$(BIN)/psring_sim)

.PHONY: all check check-run test-quick check-container bench lab lab-all deps clean fuzz sim student student-bucket
all: $(LIB) $(COLL_LIB) $(PS_LIB) $(SYS_BINS) $(TOOLS) $(SIM_BIN)

# A missing package is one line that names `make deps`, not a compiler
# error deep in the build (sodium.h: every program; uv.h: ps_server):
# $(BUILD)/.have-H is made once the header is found, and every object
# waits for it (order-only: it never rebuilds one).
have_h = @printf '\#include <%s>\n' $(1) | $(CC) $(2) -E -x c - -o /dev/null 2>/dev/null || \
         { echo "psring: $(1) not found: run 'make deps' (as root; it installs $(3)), or apt-get install $(3)" >&2; exit 1; }
$(BUILD)/.have-sodium:
	$(call have_h,sodium.h,$(SODIUM_CFLAGS),libsodium-dev)
	@mkdir -p $(dir $@) && touch $@
$(BUILD)/.have-uv:
	$(call have_h,uv.h,$(UV_CFLAGS),libuv1-dev)
	@mkdir -p $(dir $@) && touch $@
$(patsubst %.c,$(BUILD)/%.o,$(wildcard ps_server/*.c)) $(BUILD)/tests/hostile_ps_server.o: | $(BUILD)/.have-uv

# SODIUM_CFLAGS on every file (several include sodium.h): empty where the
# package is in /usr/include, a prefix's include folder where it was
# unpacked there (gpu/device_check.sh).
$(BUILD)/%.o: %.c | $(BUILD)/.have-sodium
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SODIUM_CFLAGS) $(if $(findstring ps_server,$<),$(UV_CFLAGS)) -c $< -o $@

$(BUILD)/sim/%.o: sim/%.c | $(BUILD)/.have-sodium
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SODIUM_CFLAGS) $(SG_CFLAGS) -c $< -o $@

$(BUILD)/common/coll/xport_sim.o: common/coll/xport_sim.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SG_CFLAGS) -c $< -o $@

$(BIN)/psring_sim: $(SIM_OBJ) $(COLL_LIB) $(PS_LIB) $(GPU_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) $(LDLIBS) $(GPU_LDLIBS) $(UV_LIBS) $(SG_LIBS) -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(COLL_LIB): $(COLL_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(PS_LIB): $(PS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BIN)/%: $(BUILD)/experiments/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $< $(LIB) $(LDLIBS) -o $@

# The student track (docs/lab.md, S; experiments/grade.sh --code FILE):
# $(BUILD)/student/ring_worker, bin/ring_worker with FILE's
# student_allreduce linked before libcoll's (the template's); FILE is
# compiled every time (its name may change, its time may not).
STUDENT ?= students/ring_student.c
student: $(BUILD)/ring_worker/main.o $(BUILD)/libring_worker.a $(COLL_LIB) $(GPU_LIB) $(LIB)
	@mkdir -p $(BUILD)/student
	$(CC) $(CFLAGS) -c $(STUDENT) -o $(BUILD)/student/ring_student.o
	$(CC) $(LDFLAGS) $(BUILD)/ring_worker/main.o $(BUILD)/student/ring_student.o \
	    $(filter %.a,$^) $(LDLIBS) $(GPU_LDLIBS) -o $(BUILD)/student/ring_worker

# The buckets' track (docs/lab.md, SB): $(BUILD)/student-bucket/ring_worker,
# bin/ring_worker with FILE's student_layer_done and student_backward_done
# linked before libcommon's (the template's) for --bucket-student.
BSTUDENT = $(if $(filter students/ring_student.c,$(STUDENT)),students/bucket_student.c,$(STUDENT))
student-bucket: $(BUILD)/ring_worker/main.o $(BUILD)/libring_worker.a $(COLL_LIB) $(GPU_LIB) $(LIB)
	@mkdir -p $(BUILD)/student-bucket
	$(CC) $(CFLAGS) -c $(BSTUDENT) -o $(BUILD)/student-bucket/bucket_student.o
	$(CC) $(LDFLAGS) $(BUILD)/ring_worker/main.o $(BUILD)/student-bucket/bucket_student.o \
	    $(filter %.a,$^) $(LDLIBS) $(GPU_LDLIBS) -o $(BUILD)/student-bucket/ring_worker

# Keep objects that only feed a link (tests, tools) between runs.
.SECONDARY:
.SECONDEXPANSION:
$(BUILD)/lib%.a: $$(call sys_objs,$$*)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(SYS_BINS): $(BIN)/%: $(BUILD)/%/main.o $$(filter $(BUILD)/lib$$*.a,$(SYS_LIBS)) $$(LIBS_$$*) $(GPU_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) $(LDLIBS) $(GPU_LDLIBS) $(if $(findstring ps_server,$@),$(UV_LIBS)) -o $@

$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(COLL_LIB) $(PS_LIB) $(GPU_LIB) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(GPU_LDLIBS) -o $@

$(BUILD)/tests/peer_%: $(BUILD)/tests/peer_%.o $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/fuzz_%: $(BUILD)/tests/fuzz_%.o $(BUILD)/tests/fuzzdrv.o $(PS_LIB) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# tests/hostile_*.c: TEST-ONLY hostile members for tests/t_hostile_nan.sh,
# a system's own objects linked with a few functions wrapped (-Wl,--wrap;
# each file's opening comment says which and why). Never in bin/.
HOSTILE := $(BUILD)/tests/hostile_ring $(BUILD)/tests/hostile_ps_server
HOSTILE_WRAP_ring := -Wl,--wrap=coll_allreduce,--wrap=vec_add_finite,--wrap=vec_check_finite
HOSTILE_WRAP_ps   := -Wl,--wrap=store_release,--wrap=vec_check_finite

$(BUILD)/tests/hostile_ring: $(BUILD)/tests/hostile_ring.o $(BUILD)/ring_worker/main.o $(BUILD)/libring_worker.a $(COLL_LIB) $(GPU_LIB) $(LIB)
	$(CC) $(LDFLAGS) $(HOSTILE_WRAP_ring) $(filter %.o %.a,$^) $(LDLIBS) $(GPU_LDLIBS) -o $@

$(BUILD)/tests/hostile_ps_server: $(BUILD)/tests/hostile_ps_server.o $(BUILD)/ps_server/main.o $(BUILD)/libps_server.a $(PS_LIB) $(GPU_LIB) $(LIB)
	$(CC) $(LDFLAGS) $(HOSTILE_WRAP_ps) $(filter %.o %.a,$^) $(LDLIBS) $(GPU_LDLIBS) $(UV_LIBS) -o $@

# ---------------------------------------------------------------- tests
RUN_ENV = PSR_BIN=$(abspath $(BIN)) PSR_TESTBIN=$(abspath $(BUILD)/tests)

# check: install what is missing (deps), then re-read this Makefile so that
# pkg-config sees what was just installed.
check: deps-check
	@$(MAKE) --no-print-directory check-run

check-run: all $(TESTS) $(FUZZ) $(PEERS) $(HOSTILE)
	@$(RUN_ENV) sh tests/run.sh full

test-quick: all $(TESTS) $(FUZZ) $(PEERS) $(HOSTILE)
	@$(RUN_ENV) sh tests/run.sh quick

# The Dockerfile built and run as the README says (tests/container.sh: root,
# Linux; podman with runc, a debootstrap base): `make lab` as a user and
# `make check` inside, results in results/container/. About 15 minutes, so in
# neither `check` nor .ci/run. CONTAINER_ARGS=--quick: `make test-quick`
# inside instead of `make check`.
CONTAINER_ARGS ?=
check-container:
	@bash tests/container.sh $(CONTAINER_ARGS)

bench: deps-bench
	@$(MAKE) --no-print-directory all
	@$(RUN_ENV) sh experiments/bench.sh

# The lab (experiments/lab.sh): the K sweep and size sweep of both systems on
# emulated links, the model table and the plots, under results/<run>/.
# `make lab LAB_ARGS="--ks '2 4' --link-bw 1Gbit"` passes flags through.
# The recipes exec the script (no shell between): make passes a SIGTERM
# on to its child alone, and a shell would die of it, leaving the lab to
# run on; the script stops its jobs (lib.sh, stop_on_interrupt). ^C
# reaches make and the script both; make says "Interrupt", exit 130 or 2.
LAB_ARGS ?=
lab: deps-lab
	@$(MAKE) --no-print-directory all
	@exec env $(RUN_ENV) experiments/lab.sh $(LAB_ARGS)

# Everything `make lab` runs, then the sections left out of its 3 minutes:
# the server placements (lab.sh --only servers: ps_servers.png) and the
# stragglers (lab.sh --only stragglers: stragglers.png, loss_time.png; its
# own options, `STRAG_ARGS="--quick"`, since LAB_ARGS are the sweeps').
STRAG_ARGS ?=
lab-all: lab
	@exec env $(RUN_ENV) experiments/lab.sh --only servers $(LAB_ARGS)
	@exec env $(RUN_ENV) experiments/lab.sh --only stragglers $(STRAG_ARGS)

# The simulation study (docs/sim.md): validation against the model and the
# emulated link, the large-K sweep, the seed's K table, the plots, under
# results/sim-<date>/. `make sim SIM_ARGS="--quick"` for a short one.
SIM_ARGS ?=
sim: deps-sim
	@$(MAKE) --no-print-directory all
	@exec env $(RUN_ENV) experiments/sim_all.sh $(SIM_ARGS)

# libFuzzer builds of the fuzz targets (clang only), for long fuzzing runs:
#   make fuzz && build/fuzz/fuzz_proto -max_total_time=60
fuzz: $(LIB_SRC) $(FUZZ_SRC) common/ps/checkpoint.c
	@command -v clang >/dev/null || { echo "make fuzz needs clang: apt-get install clang"; exit 1; }
	@mkdir -p build/fuzz
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	  echo "clang -fsanitize=fuzzer,address,undefined $$f -> build/fuzz/$$n"; \
	  clang -std=c11 -D_GNU_SOURCE -g -O1 -Icommon -fsanitize=fuzzer,address,undefined \
	    $$f $(LIB_SRC) common/ps/checkpoint.c $(LDLIBS) -o build/fuzz/$$n || exit 1; done

# ---------------------------------------------------------------- set-up
# Each target installs what it uses and only that (experiments/deps.sh has
# the table: lab needs a compiler, libuv, libsodium and gnuplot, no MPI and
# no tc). `make deps` covers every target. As root with apt-get the missing
# packages are installed; otherwise each target's missing Debian packages
# are named on one line, and the target stops (exit 1).
deps:
	@sh experiments/deps.sh build lab check bench sim

deps-%:
	@sh experiments/deps.sh $*

clean:
	rm -rf build bin

-include $(SIM_OBJ:.o=.d) $(LIB_OBJ:.o=.d) $(COLL_OBJ:.o=.d) $(PS_OBJ:.o=.d) $(TESTS:=.d) $(FUZZ:=.d) $(PEERS:=.d) $(HOSTILE:=.d) $(TOOL_SRC:%.c=$(BUILD)/%.d) \
         $(foreach d,$(SYSTEMS),$(patsubst %.c,$(BUILD)/%.d,$(wildcard $(d)/*.c)))
