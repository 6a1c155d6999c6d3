# gpu.mk -- the GPU parts (gpu/), included by the Makefile before its
# sources. It sets GPU_LIB (every system binary and unit test links it) and
# GPU_LDLIBS, builds bin/bench_gpu, and defines `make check-gpu`.
#
# Where nvcc and libcudart_static.a are found (the Makefile finds NVCC,
# CUDA_DIR and NCCL_H): $(BUILD)/libgpu.a holds the CUDA code (gpu/*.cu by
# nvcc, gpu/gpu_device.c, gpu_stream.c and gpu_nccl.c by cc against the
# CUDA headers), and the CUDA runtime is linked STATICALLY, so a binary
# starts on a machine without CUDA libraries and fails only when asked for
# a device. NCCL is never linked: gpu_nccl.c dlopens libnccl.so.2 at run
# time (PSRING_NCCL_LIB overrides), and needs nccl.h only for its types;
# without nccl.h, gpu_nccl_stub.c answers "built without NCCL".
# Without nvcc (or without libcudart_static.a): gpu/gpu_stub.c, whose every
# call says "built without CUDA (nvcc not found)" (its NCCL calls are
# gpu_nccl_stub.c's, included with that reason), and the CPU build is
# otherwise unchanged. `make NVCC=` forces this build.
#
#   make check-gpu            build and run the GPU tests (tests/run.sh gpu),
#                             a missing GPU being a FAILURE (in `make check`
#                             they skip)
#   make GPU_GENCODE="..."    other GPU targets (default below)

# gpu.mk's rules come before the Makefile's `all`: keep `all` the default.
ifeq ($(.DEFAULT_GOAL),)
  .DEFAULT_GOAL := all
endif

GPU_COMMON_SRC := gpu/gpu_err.c gpu/gpu_fit.c
GPU_CUDA_C_SRC := gpu/gpu_device.c gpu/gpu_stream.c
GPU_CU_SRC     := $(wildcard gpu/*.cu)
CUDART_A       := $(if $(CUDA_DIR),$(firstword $(wildcard $(CUDA_DIR)/lib64/libcudart_static.a \
                                                $(CUDA_DIR)/targets/*/lib/libcudart_static.a)))

# GPU targets: machine code for sm_90 (the H100 and H200 psring is measured
# on: no JIT at start, Hopper's own instruction set), plus PTX for
# compute_75, the oldest target CUDA 13 supports, which the driver compiles
# at first use on any other GPU from Turing on (A100, L4, Blackwell). The
# kernels use nothing newer than sm_70 (__nanosleep), and -fmad=false is
# kept in the PTX (mul.rn/add.rn), so a JIT-compiled kernel rounds the
# same. Compiling twice per file costs a few seconds.
GPU_GENCODE ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75
GPU_TARGETS := $(strip $(foreach g,$(GPU_GENCODE),$(if $(findstring code=,$(g)),$(lastword $(subst code=, ,$(g))))))

# -fmad=false: no fused multiply-add (bit-identity with the CPU, gpu.h);
# IEEE division, square root and denormals stated, not assumed. Host code:
# the project's warnings as errors, and no C++ runtime (no exceptions, RTTI
# or thread-safe statics), so the objects link with cc and no libstdc++.
NVCCFLAGS := -std=c++17 -O2 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true \
             $(GPU_GENCODE) -Werror all-warnings -Icommon -Igpu \
             -Xcompiler -Wall,-Wextra,-Wshadow,-Werror,-fno-exceptions,-fno-rtti,-fno-threadsafe-statics

CFLAGS  += -Igpu
GPU_LIB := $(BUILD)/libgpu.a

ifneq ($(and $(NVCC),$(CUDART_A)),)
  GPU_OBJ := $(GPU_CU_SRC:%.cu=$(BUILD)/%.o) \
             $(patsubst %.c,$(BUILD)/%.o,$(GPU_CUDA_C_SRC) $(GPU_COMMON_SRC)) \
             $(BUILD)/gpu/$(if $(NCCL_H),gpu_nccl.o,gpu_nccl_stub.o)
  GPU_LDLIBS := $(CUDART_A) -ldl -lrt -lpthread
  # nccl.h's folder, unless it is CUDA's or /usr/include (already searched;
  # -isystem /usr/include would upset #include_next).
  GPU_INC := $(sort $(CUDA_DIR)/include $(filter-out /usr/include,$(patsubst %/,%,$(dir $(NCCL_H)))))
  $(BUILD)/gpu/%.o: CFLAGS += $(addprefix -isystem ,$(GPU_INC)) -DGPU_CUDA_TARGETS='"$(GPU_TARGETS)"'
else
  ifneq ($(NVCC),)
    ifeq ($(MAKELEVEL),0)
      $(info psring: nvcc at $(NVCC) but no libcudart_static.a under $(CUDA_DIR): building the CPU paths only)
    endif
  endif
  GPU_OBJ := $(patsubst %.c,$(BUILD)/%.o,gpu/gpu_stub.c $(GPU_COMMON_SRC))
  GPU_LDLIBS :=
endif

all: $(BIN)/bench_gpu

$(BUILD)/gpu/%.o: gpu/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# Rebuilt whole (rm first) so that switching between the CUDA and the stub
# build in one BUILD folder never leaves the other's objects inside.
$(GPU_LIB): $(GPU_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^

# bench_gpu's main lives in gpu/ (an experiments/*.c would be linked with
# libcommon alone). libcommon.a is named as a path: gpu.mk is read before
# the Makefile defines LIB.
$(BIN)/bench_gpu: $(BUILD)/gpu/bench_gpu.o $(GPU_LIB) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(GPU_LDLIBS) -o $@

# test_gpu links libgpu and libcommon only (not the systems' libraries),
# so that check-gpu builds where libuv is missing, as on the GPU machine.
$(BUILD)/tests/test_gpu: $(BUILD)/tests/test_gpu.o $(GPU_LIB) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) $(GPU_LDLIBS) -o $@

# check-gpu builds every program its tests call: test_gpu, bench_gpu,
# ring_worker, ps_worker, and what launch.sh needs for a job (psr_merge,
# model; tests/t_gpu_ps.sh failed on a GPU machine with "launch.sh: no
# model in build/gpu/bin"), and ps_server where libuv is found (pkg-config
# libuv; gpu/device_check.sh points pkg-config at the Debian packages it
# unpacks). Without libuv, ps_server is not built and t_gpu_ps.sh skips,
# saying so.
GPU_CHECK_BINS := $(BUILD)/tests/test_gpu $(addprefix $(BIN)/,bench_gpu ring_worker ps_worker psr_merge model) \
                  $(if $(UV_LIBS),$(BIN)/ps_server)
.PHONY: check-gpu
check-gpu: $(GPU_CHECK_BINS)
	@PSR_BIN=$(abspath $(BIN)) PSR_TESTBIN=$(abspath $(BUILD)/tests) sh tests/run.sh gpu

-include $(GPU_OBJ:.o=.d) $(BUILD)/gpu/bench_gpu.d
