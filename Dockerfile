# memgate: the GraphQL memory gateway. With DATABASE_URL it uses that PostgreSQL (with pgvector);
# without it, embedded PGlite under MEMGATE_DATA_DIR (mount a volume there to keep it).
FROM node:20-bookworm-slim

WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# Dependencies first so that a source change reuses this layer (their install scripts run
# later: `prepare` builds from the sources, which are not copied yet).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm cache clean --force

COPY . .
# The build (dist/) and what a first start would otherwise derive: the embedding cache and a
# migrated database template. `npm start` then runs plain JavaScript.
RUN npm run prepare

# The data dir holds the PGlite database (when DATABASE_URL is unset) and the embedding cache.
ENV MEMGATE_HOST=0.0.0.0 \
    MEMGATE_PORT=4000 \
    MEMGATE_DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data
USER node

EXPOSE 4000
# A first start copies the database template into /data (a few seconds).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MEMGATE_PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["npm", "start"]
