# Dockerfile -- psring's lab in a container, for students on macOS or
# Windows (Docker Desktop, Podman) or on any machine that is not Debian.
#
#   mkdir -p results
#   docker build --build-arg PSR_GIT="$(git rev-parse --short HEAD)" -t psring .
#   docker run --rm -v "$PWD/results:/psring/results" -e PSR_HOST_RESULTS="$PWD/results" psring
#
# The second command runs `make lab`; its results folder (index.html, the
# CSVs, the plots, the manifest) lands in ./results on the host through the
# volume (podman refuses a volume whose host folder does not exist: hence
# the mkdir; Docker would create it, owned by root). PSR_HOST_RESULTS is only
# for the messages: the lab prints that path where it would print
# /psring/results. PSR_GIT is the commit the manifest records (.git stays
# out of the image, .dockerignore); without it the manifest says
# `git: unknown`. On Linux with a root Docker daemon add
# `--user "$(id -u):$(id -g)"` to get results owned by you. Anything after
# the image name replaces the command, e.g.
#   docker run --rm -v "$PWD/results:/psring/results" psring make lab LAB_ARGS="--ks '1 2 4 8'"
#
# TESTED by `make check-container` (tests/container.sh; root on Debian 12,
# podman with runc): it imports a minbase debootstrap root as the base
# (BASE=localhost/debian:12), builds this file, runs `make lab` as
# --user 1234:1234 and `make check` in the image. The image holds a Debian
# 12 base, make (to run the project's own set-up), then only `make
# deps-lab` (experiments/deps.sh: the packages the lab uses, nothing else)
# and `make`. The lab emulates its links inside the processes, so it needs
# no privileges; `--netns` would (run with --privileged), and `make check`
# installs `make deps-check` first (as root, with the network).
ARG BASE=debian:12
FROM ${BASE}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends make \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /psring
COPY . .
RUN make deps-lab && make clean && make all && rm -rf /var/lib/apt/lists/*

# After the build, so that a new commit id alone rebuilds nothing.
ARG PSR_GIT=
ENV PSR_GIT=${PSR_GIT}

VOLUME /psring/results
CMD ["make", "lab"]
