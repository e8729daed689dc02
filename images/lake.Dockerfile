# syntax=docker/dockerfile:1.7
# The lake server image: one per organization's context lake (`agentry lake`), DuckDB in-process.
# It downloads datasets with the AWS SDK (DuckDB's httpfs extension would download itself at run
# time, which locked-down clusters refuse), so the image needs no network beyond S3.
#
#   docker build -f images/lake.Dockerfile -t ghcr.io/agentry-dev/agentry-lake:0.1.0 .
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
# DuckDB spills to its temporary directory; the lake's disk is mounted at /var/lib/agentry-lake.
RUN chmod 0755 /app/dist/cli/main.js \
 && ln -s /app/dist/cli/main.js /usr/local/bin/agentry \
 && install -d -o 1000 -g 1000 /var/lib/agentry-lake
USER 1000:1000
EXPOSE 8700
ENTRYPOINT ["agentry"]
CMD ["lake"]
