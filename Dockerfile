# The admission webhook: `kyma-serverless webhook serve` (see README, "Admission webhook").
#
#   docker build -t registry.example.com/platform/kyma-serverless-webhook:0.1.0 .
#
# Stage 1 compiles the TypeScript and keeps only the runtime dependencies; stage 2 is a
# distroless Node.js 20 image without shell or package manager, running as uid 65532.

FROM docker.io/library/node:20.19.5-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency needs an install script to run the server.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY imports ./imports
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /build/package.json ./
COPY --from=build /build/node_modules ./node_modules
COPY --from=build /build/lib/src ./lib/src
COPY --from=build /build/lib/imports ./lib/imports
COPY bin ./bin
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/kyma-serverless.js"]
CMD ["webhook", "serve", "--port", "8443", "--metrics-port", "8080", "--config", "/etc/kyma-serverless-webhook/config.yaml"]
