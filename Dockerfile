# syntax=docker/dockerfile:1.7
# Gearbox: ext_proc, control plane and the all-in-one server in one image; the mode is the
# command (CMD serve; Kubernetes passes extproc or xds). The edge agent has its own image
# (Dockerfile.edge-agent): it carries llama.cpp, this one does not need it.
#   docker build -t ghcr.io/gearbox/gearbox:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/gearbox/gearbox:0.1.0 --push .

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. --ignore-scripts: no install script runs (node-llama-cpp would
# fetch or build llama.cpp, which only the edge agent uses); the add-ons Gearbox loads ship
# prebuilt binaries for linux x64 and arm64.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# Distroless: no shell, no package manager; runs as the image's nonroot user (65532).
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY cli ./cli
COPY extproc ./extproc
COPY xds ./xds
COPY edge-agent ./edge-agent
COPY proto ./proto
USER 65532:65532
# ext_proc gRPC, front door, admin API, metrics, control plane.
EXPOSE 50051 8080 8081 9464 18000
ENTRYPOINT ["/nodejs/bin/node", "bin/gearbox.mjs"]
CMD ["serve"]
