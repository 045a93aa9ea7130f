# memgate: the GraphQL memory gateway. With DATABASE_URL it uses that PostgreSQL (with pgvector);
# without it, embedded PGlite under MEMGATE_DATA_DIR (mount a volume there to keep it).
FROM node:20-bookworm-slim

WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# Dependencies first so that a source change reuses this layer. All of them, dev included: the
# server runs the TypeScript sources through tsx, as `npm start` does in a clone.
COPY package.json package-lock.json ./
RUN npm ci && npm cache clean --force

COPY . .

# The data dir holds the PGlite database (when DATABASE_URL is unset) and the embedding cache.
ENV MEMGATE_HOST=0.0.0.0 \
    MEMGATE_PORT=4000 \
    MEMGATE_DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 4000
# Start-up can include PGlite's initdb, migrations and building the embedding cache.
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MEMGATE_PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["npm", "start"]
