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
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /gatehouse ./cmd/gatehouse

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /gatehouse /gatehouse
# distroless' nonroot user. The Deployment sets runAsUser 1001 (gatehouse's own
# pod security defaults); a static binary runs as either.
USER 65532:65532
ENTRYPOINT ["/gatehouse"]
