# syntax=docker/dockerfile:1

# ---- dependencies stage: install production dependencies, compiling native modules ----
FROM node:20-bookworm-slim AS deps

# Toolchain for node-gyp: better-sqlite3 falls back to a source build when no
# prebuilt binary matches; msgpackr-extract may need it too.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# the build script only: `npm ci` runs it (prepare), and with no sources here yet it does nothing
COPY scripts/build.mjs ./scripts/

# Only production dependencies: the build needs esbuild, which is one; tsx and the rest of the
# development tools are not needed. `npm ci` installs exactly the locked tree (its optional
# platform packages included, for whichever platform builds the image). Install scripts must run
# (better-sqlite3, esbuild, protobufjs, msgpackr-extract, usearch: the allowScripts of
# package.json); onnxruntime-node's must not (it fetches GPU libraries; its CPU binaries ship in
# the package).
ENV ONNXRUNTIME_NODE_INSTALL=skip
RUN npm ci --omit=dev --no-audit --no-fund \
    && npm cache clean --force

# ---- compile stage: the TypeScript sources into dist/ (JavaScript and source maps) ----
FROM deps AS build

COPY api ./api
COPY runtime ./runtime
COPY jobs ./jobs
COPY workers ./workers
COPY core ./core
COPY db ./db
COPY providers ./providers
COPY contracts ./contracts
COPY lib ./lib
COPY scripts ./scripts
# the web console, bundled into dist/console (served at /console)
COPY console ./console
RUN node scripts/build.mjs

# ---- runtime stage ----
FROM node:20-bookworm-slim AS runtime

ENV NODE_ENV=production \
    PORT=8080

WORKDIR /app

COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json package-lock.json ./
# The compiled program only, no sources: the npm scripts' check for a stale build (scripts/build.mjs)
# finds none to compare and runs dist/ as it is.
COPY --from=build --chown=node:node /app/scripts/build.mjs ./scripts/build.mjs
COPY --from=build --chown=node:node /app/dist ./dist

# Writable location for local data owned by the runtime user; without LOCAL_MODEL_DIR the local
# embedding model is downloaded once into /app/data/models.
RUN mkdir -p /app/data && chown node:node /app/data

USER node

EXPOSE 8080

# No curl in the slim image: use Node's built-in fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

# node itself, not `npm run start:api`: npm hands SIGTERM to a shell that ends without passing it
# on, so `docker stop` would not let the API shut down in order. The npm scripts work here too
# (e.g. `npm run keys -- list --project default`): they find dist/ and no sources, and run it.
CMD ["node", "--enable-source-maps", "dist/scripts/start-api.js"]
