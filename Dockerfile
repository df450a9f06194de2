# gatehouse's container image: one static binary on distroless.
#   docker build -t gatehouse:dev .
# deploy/default runs it (image ghcr.io/gatehouse-dev/gatehouse); make e2e-kind
# builds it as gatehouse:e2e and loads it into a kind cluster.

# The go.mod `go` line; GOTOOLCHAIN=local so a mismatch fails instead of
# downloading another toolchain during the build.
FROM golang:1.26.8 AS build
ENV GOTOOLCHAIN=local
WORKDIR /src
# Dependencies first: this layer is rebuilt only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# `make release` passes the release and the commit; `gatehouse version` prints them.
ARG VERSION=0.1.0
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
      -X github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app.Version=${VERSION} \
      -X github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app.Commit=${COMMIT}" \
      -o /gatehouse ./cmd/gatehouse

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /gatehouse /gatehouse
# distroless' nonroot user. The Deployment sets runAsUser 1001 (gatehouse's own
# pod security defaults); a static binary runs as either.
USER 65532:65532
ENTRYPOINT ["/gatehouse"]
