# syntax=docker/dockerfile:1.7
# The control-plane image: the API server and the operator, one image, two commands
# (`agentry api`, `agentry operator`; the Helm chart passes the command as args).
#
#   docker build -f images/control-plane.Dockerfile -t ghcr.io/agentry-dev/agentry:0.1.0 .
#
# Node 24 LTS (supported until April 2028). The tests of this repository run on Node 20 and 24's
# API is a superset for what Agentry uses; bump NODE_VERSION after running the test suite on it.
# Debian (glibc), not Alpine: DuckDB's prebuilt bindings (@duckdb/node-bindings-linux-*) need glibc.
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
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# `agentry` on PATH: `kubectl exec deploy/agentry-api -- agentry keys create ...` (NOTES.txt).
RUN chmod 0755 /app/dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/agentry
# The `node` user of the base image (uid/gid 1000). The chart runs it with a read-only root
# filesystem and a writable /tmp and /var/lib/agentry.
USER 1000:1000
EXPOSE 8080 8081
ENTRYPOINT ["agentry"]
CMD ["--help"]
