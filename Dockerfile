# syntax=docker/dockerfile:1
# Multi-stage image: build with dev dependencies, run with production dependencies only, as a
# non-root user, with /data (repositories, artifacts, embedded database, secret key) as the volume.
# .ci/run replays the runtime stage's steps in a fresh folder (no container engine on CI).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gitlab \
 && useradd --system --uid 10001 --gid gitlab --home-dir /data --shell /usr/sbin/nologin gitlab \
 && mkdir -p /data && chown gitlab:gitlab /data && chmod 0700 /data
WORKDIR /app
ENV NODE_ENV=production DATA_DIR=/data PORT=8080 HOST=0.0.0.0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER gitlab
VOLUME ["/data"]
EXPOSE 8080 2222
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/-/readiness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
