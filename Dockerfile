# syntax=docker/dockerfile:1
# Multi-stage build: dependencies and compilation in throw-away stages, a slim runtime as a non-root user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
# The image renders PDFs with Debian's Chromium (below), so the optional bundled one is pruned with the dev tools.
RUN npm run build && npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
# The compliance PDF is printed by Chromium. The image uses Debian's package rather than the one inside the
# @sparticuz/chromium npm package: it gets its security fixes with the base image's updates, it runs on the
# distribution's own libraries and fonts (Liberation and DejaVu, which the report names), and it needs no unpacking
# into /tmp at first use, so the container's root filesystem can be read-only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
RUN groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --home-dir /app --shell /usr/sbin/nologin app \
 && mkdir -p /data && chown app:app /data
COPY --from=build --chown=app:app /app/package.json ./package.json
COPY --from=build --chown=app:app /app/node_modules ./node_modules
COPY --from=build --chown=app:app /app/dist ./dist
USER app
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM stops accepting connections, finishes in-flight requests, then closes the database pool.
STOPSIGNAL SIGTERM
CMD ["node", "dist/apps/api/src/main.js"]
