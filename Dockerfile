# syntax=docker/dockerfile:1.7
# Gearbox: ext_proc, control plane and the all-in-one server in one image; the mode is the
# command (CMD serve; Kubernetes passes extproc or xds). No inference engine: llama.cpp, ONNX
# Runtime and ollama belong to the edge agent's workspace (edge-agent/package.json) and its own
# image (Dockerfile.edge-agent); `gearbox edge-agent` here says so when it loads a model.
#   docker build -t ghcr.io/gearbox/gearbox:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/gearbox/gearbox:0.1.0 --push .

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# The root package's production dependencies only: --workspaces=false leaves out the edge-agent
# workspace and with it every inference engine. --ignore-scripts: no install script runs; the
# add-ons Gearbox loads (usearch, esbuild for tsx) ship prebuilt binaries for linux x64 and arm64.
RUN npm ci --omit=dev --workspaces=false --ignore-scripts && npm cache clean --force

# Distroless: no shell, no package manager; runs as the image's nonroot user (65532).
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY cli ./cli
COPY common ./common
COPY extproc ./extproc
COPY xds ./xds
COPY edge-agent ./edge-agent
# `gearbox demo` (cloud stand-in and script; it runs its edge agent with llama.cpp, so it works in the edge-agent image)
COPY demo ./demo
COPY proto ./proto
USER 65532:65532
# ext_proc gRPC, front door, admin API, metrics, control plane.
EXPOSE 50051 8080 8081 9464 18000
ENTRYPOINT ["/nodejs/bin/node", "bin/gearbox.mjs"]
CMD ["serve"]
