# syntax=docker/dockerfile:1.7
# The runner image: what each workspace Pod runs (`agentry runner`, started by the operator's pod
# runtime with its token, port and directories in the environment). The agent CLIs are optional
# layers, chosen at build time:
#
#   docker build -f images/runner.Dockerfile -t ghcr.io/agentry-dev/agentry-runner:0.1.0 \
#     --build-arg INSTALL_CLAUDE_CODE=true --build-arg INSTALL_CODEX=true .
#
# An executor whose CLI is not installed fails its prompt with an error event saying so. The
# `shell` executor needs only bash. KubeVirt VMs do not use this image: docs/runtimes.md describes
# their disk image.
ARG NODE_VERSION=24

# ---- build: compile the TypeScript with the dev dependencies ------------------------------------
# The build and deps stages are the same in all three images/*.Dockerfile (a unit test keeps them
# so): a layer cache then compiles and installs once for all three images.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No dependency of Agentry needs an install script; skipping them keeps the build reproducible.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY cli ./cli
COPY crds ./crds
COPY egress ./egress
COPY lake ./lake
COPY operator ./operator
COPY platform ./platform
COPY runner ./runner
COPY web ./web
RUN npm run build

# ---- deps: production dependencies only ----------------------------------------------------------
# DuckDB's native binding arrives as the optional dependency for this platform (glibc x64 or arm64).
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# What agents expect of a workstation: git (the runner clones githubUrl), bash (the shell
# executor), ssh for git remotes, CA certificates, and a few everyday tools. Debian's stable
# archive is pinned by the base image tag; versions are not pinned one by one.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates curl git jq less openssh-client procps ripgrep unzip \
 && rm -rf /var/lib/apt/lists/*
# The agent CLIs, each its own layer. Each layer's build arguments are declared just before it, so
# changing one choice keeps the layers above it. The script fails the build, naming the CLI, when
# an asked-for install fails.
COPY images/install-agent-clis.sh /usr/local/bin/install-agent-clis
ARG INSTALL_CLAUDE_CODE=false
ARG CLAUDE_CODE_VERSION=2.1.330
RUN install-agent-clis claude-code
ARG INSTALL_CODEX=false
ARG CODEX_VERSION=0.169.0
RUN install-agent-clis codex
ARG INSTALL_GEMINI=false
ARG GEMINI_CLI_VERSION=0.61.0
RUN install-agent-clis gemini
ARG INSTALL_OPENCODE=false
ARG OPENCODE_VERSION=1.18.33
RUN install-agent-clis opencode
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# /code and the runner's state directory are mounted from the workspace disk; owned by the runner
# (uid/gid 1000, as operator/runtimes/pod.ts runs it) for the case they are not.
RUN chmod 0755 /app/dist/cli/main.js \
 && ln -s /app/dist/cli/main.js /usr/local/bin/agentry \
 && install -d -o 1000 -g 1000 /code /var/lib/agentry-runner
USER 1000:1000
ENV HOME=/home/node
WORKDIR /code
EXPOSE 8700
ENTRYPOINT ["agentry"]
CMD ["runner"]
