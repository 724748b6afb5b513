# Pictor's service (`npm start`: the Discord and Slack bots, /metrics and
# /healthz) and the `pictor` CLI, on Node.js 20. See docs/deploying.md.
#
#   docker build -t pictor .
#   docker run -d --env-file .env -e PICTOR_DATA_DIR=/data -e PICTOR_METRICS_PORT=9464 \
#     -p 127.0.0.1:9464:9464 -v pictor-data:/data --stop-timeout 330 pictor
#
# Build argument NODE_IMAGE: the Node.js 20 base image (default node:20-bookworm-slim;
# any Debian-like image with node 20.18.1 or later and npm on PATH).
#
# Behind a TLS-inspecting proxy, npm ci needs the proxy's CA: hand it in as the
# build secret extra_ca (it is read by npm, never stored in a layer):
#   docker build --secret id=extra_ca,src=/path/to/proxy-ca.crt -t pictor .
ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: every dependency, then dist/ (the compiled service and the CLI bundle)
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The n8n node package (workspace nodes/) is not part of the image: --workspaces=false.
# No install scripts: the package's `prepare` is the build itself, run below once
# the sources are in; sharp's and esbuild's native code comes prebuilt in their
# platform packages (@img/sharp-*, @esbuild/*).
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra_ca \
    if [ -f /run/secrets/extra_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; fi \
 && npm ci --workspaces=false --ignore-scripts --prefer-offline --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY bots ./bots
RUN npm run build

# --- production dependencies only (npm's cache stays in this stage)
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra_ca \
    if [ -f /run/secrets/extra_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; fi \
 && npm ci --omit=dev --workspaces=false --ignore-scripts --prefer-offline --no-audit --no-fund

# --- runtime: dist/ and the production dependencies, as an unprivileged user
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
COPY package.json package-lock.json LICENSE ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

# jemalloc as the memory allocator: after a burst of large images it gives the memory back to the system, where
# glibc's malloc keeps hundreds of MB (docs/deploying.md, "The image"). At run time LD_PRELOAD= (empty) falls back to
# glibc. The library's folder depends on the architecture; /usr/local/lib/libjemalloc.so.2 names it on any.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2)" /usr/local/lib/libjemalloc.so.2 \
 && useradd --uid 10001 --user-group --home-dir /app --no-create-home --shell /usr/sbin/nologin pictor \
 && mkdir /data \
 && chown pictor:pictor /data \
 && chmod 0700 /data

# The data folder: the spend ledger without REDIS_URL, the bots' job records.
# /metrics and /healthz on 9464, on every interface so the probe and Prometheus
# reach it from outside the container (do not publish it to the internet).
ENV NODE_ENV=production \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
    PICTOR_CONTAINER=1 \
    PICTOR_DATA_DIR=/data \
    PICTOR_METRICS_PORT=9464 \
    PICTOR_METRICS_HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 9464
USER pictor

# Readiness: 200 when the configured chat surfaces and Redis are connected.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PICTOR_METRICS_PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Node itself is PID 1, so SIGTERM reaches it: running jobs get
# PICTOR_SHUTDOWN_GRACE_SECONDS (default 300) to finish; stop with a timeout
# above it (docker stop -t 330).
CMD ["node", "dist/bots/main.js"]
