# syntax=docker/dockerfile:1

# ---- build stage: install production dependencies, compiling native modules ----
FROM node:20-bookworm-slim AS deps

# Toolchain for node-gyp: better-sqlite3 falls back to a source build when no
# prebuilt binary matches; msgpackr-extract may need it too.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./

# tsx is a runtime dependency, so dev dependencies can be omitted. `npm ci` installs exactly the
# locked tree (its optional platform packages included, for whichever platform builds the image).
# Install scripts must run (better-sqlite3, esbuild, protobufjs, msgpackr-extract, usearch: the
# allowScripts of package.json); onnxruntime-node's must not (it fetches GPU libraries; its CPU
# binaries ship in the package).
ENV ONNXRUNTIME_NODE_INSTALL=skip
RUN npm ci --omit=dev --no-audit --no-fund \
    && npm cache clean --force

# ---- runtime stage ----
FROM node:20-bookworm-slim AS runtime

ENV NODE_ENV=production \
    PORT=8080

WORKDIR /app

COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json package-lock.json tsconfig.json ./
COPY --chown=node:node api ./api
COPY --chown=node:node runtime ./runtime
COPY --chown=node:node jobs ./jobs
COPY --chown=node:node workers ./workers
COPY --chown=node:node core ./core
COPY --chown=node:node db ./db
COPY --chown=node:node providers ./providers
COPY --chown=node:node contracts ./contracts
COPY --chown=node:node lib ./lib
COPY --chown=node:node scripts ./scripts

# Writable location for local data owned by the runtime user; without LOCAL_MODEL_DIR the local
# embedding model is downloaded once into /app/data/models.
RUN mkdir -p /app/data && chown node:node /app/data

USER node

EXPOSE 8080

# No curl in the slim image: use Node's built-in fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

CMD ["npm", "run", "start:api"]
