# syntax=docker/dockerfile:1
# Multi-stage build: dependencies and compilation in throw-away stages, a slim runtime as a non-root user on
# Node.js 24 (LTS). CI builds and runs this artefact without a Docker engine, instruction by instruction
# (tools/artefact/dockerfile.mjs), and puts it through a production smoke (tools/artefact/smoke.mjs).
FROM node:24-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The typed client is a development dependency of the repository (file:packages/client): npm ci needs its manifest.
COPY packages/client/package.json packages/client/package.json
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
# The image renders PDFs with Debian's Chromium (below), so the bundled one (the optional @sparticuz/chromium, 64 MB)
# is removed by name after the dev tools are pruned. Not with --omit=optional: the native binaries of
# @node-rs/argon2 are optional dependencies too (one per platform), and the service cannot start without them.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/@sparticuz/chromium

FROM node:24-trixie-slim AS runtime
# The compliance PDF is printed by Chromium. The image uses Debian's package rather than the one inside the
# @sparticuz/chromium npm package: it gets its security fixes with the base image's updates, it runs on the
# distribution's own libraries and fonts (Liberation and DejaVu, which the report names), and it needs no unpacking
# into /tmp at first use.
# tini is the container's PID 1: it forwards SIGTERM to node and reaps the processes Chromium leaves behind (node as
# PID 1 would reap none, and the kernel gives PID 1 no default action for SIGTERM).
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-dejavu-core tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
# The service writes nothing under /app, so the root filesystem can be read-only (docker run --read-only, or
# read_only in compose) with a tmpfs on /tmp, where each PDF render keeps its Chromium profile. /data is used only
# by the embedded database (no DATABASE_URL): mount a volume there for that, and nothing else.
RUN groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --home-dir /app --shell /usr/sbin/nologin app \
 && mkdir -p /data && chown app:app /data
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# By number, so that an orchestrator can check that the image does not run as root (Kubernetes' runAsNonRoot).
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM stops accepting connections, finishes in-flight requests, then closes the database pool.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/apps/api/src/main.js"]
