# Dockerfile -- psring's lab in a container, for students on macOS or
# Windows (Docker Desktop, Podman) or on any machine that is not Debian.
#
#   docker build -t psring .
#   docker run --rm -v "$PWD/results:/psring/results" psring
#
# The second command runs `make lab`; its results folder (index.html, the
# CSVs, the plots, the manifest) lands in ./results on the host through the
# volume. Anything after the image name replaces the command, e.g.
#   docker run --rm -v "$PWD/results:/psring/results" psring make lab LAB_ARGS="--ks '1 2 4 8'"
#
# UNTESTED: no machine this project is built on has a container engine or
# an image registry, so this file has never been built. It is kept correct
# by construction: a Debian 12 base, make (to run the project's own set-up),
# then only `make deps-lab` (experiments/deps.sh: the packages the lab
# uses, nothing else) and `make`. The lab emulates its links inside the
# processes, so it needs no privileges; `--netns` would (run with
# --privileged), and `make check` wants `make deps-check` first.
FROM debian:12

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends make \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /psring
COPY . .
RUN make deps-lab && make clean && make all && rm -rf /var/lib/apt/lists/*

VOLUME /psring/results
CMD ["make", "lab"]
