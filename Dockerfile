# syntax=docker/dockerfile:1
# IdeA MCP tool permission service (PDP). See README.md.
#
#   docker build -t idea-pdp .
#   docker compose up -d            (docker-compose.yml: read-only root, tokens, mounted projects)
#
# Inside the container the service listens on 0.0.0.0 (PDP_HOST), so it refuses to start
# without PDP_DECIDE_TOKEN (or PDP_DECIDE_TOKEN_FILE): every non-loopback deployment must
# authenticate /decide and the GET routes.

# Node 24, the active LTS line (the suite also runs on 20.19+ and 26 in CI).
ARG NODE_IMAGE=node:24.22-bookworm-slim

# ---------------------------------------------------------------- build: TypeScript and UI
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

# ---------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PDP_HOST=0.0.0.0 \
    PDP_PORT=8787 \
    PDP_STATE_DIR=/var/lib/pdp
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
# The bundled demo projects (served when neither PDP_PROJECTS_ROOT nor PDP_PROJECTS is set).
# Owned by `node` so the API can write their policy files when the root filesystem is writable.
COPY --chown=node:node examples/projects ./examples/projects
# The state folder (generated admin token, audit trail) must belong to the unprivileged user;
# a named volume mounted here starts with this ownership.
RUN mkdir -p /var/lib/pdp && chown node:node /var/lib/pdp && chmod 0700 /var/lib/pdp
USER node
EXPOSE 8787
# No curl in the slim image: Node's own fetch checks liveness.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PDP_PORT||8787)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/server/main.js"]
